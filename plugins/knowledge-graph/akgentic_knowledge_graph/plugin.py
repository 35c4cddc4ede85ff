"""Hook implementations of the knowledge-graph plugin: the card and its stored types."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import MessageTypeSpec, ToolCardSpec, hookimpl
from akgentic_knowledge_graph.card import KnowledgeGraphTool
from akgentic_knowledge_graph.console_pane import akgentic_console_panes as akgentic_console_panes

_ORIGINAL = "akgentic.tool.knowledge_graph"


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``knowledge_graph`` card and the ``akgentic.tool.knowledge_graph`` path."""
    return [
        ToolCardSpec(
            name="knowledge_graph",
            card=KnowledgeGraphTool,
            description="The team's knowledge graph of entities and relations, with search.",
            import_paths=(_ORIGINAL,),
        )
    ]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """The graph's stored payloads, under the original's paths as aliases."""
    from akgentic_knowledge_graph import models

    specs = []
    for cls, what in (
        (models.KnowledgeGraphStateEvent, "One change of the team's knowledge graph"),
        (models.Entity, "One entity of the graph"),
        (models.Relation, "One relation of the graph"),
        (models.KnowledgeGraph, "The graph's entities and relations"),
        (models.KnowledgeGraphState, "The graph as #KnowledgeGraphTool saves it"),
    ):
        specs.append(
            MessageTypeSpec(
                name=cls.__name__,
                message_class=cls,
                aliases=(f"{_ORIGINAL}.models.{cls.__name__}",),
                description=what,
            )
        )
    return specs
