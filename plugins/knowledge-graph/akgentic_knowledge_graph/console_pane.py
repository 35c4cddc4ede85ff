"""The knowledge graph's pane of the web console: entities and relations, drawn and searchable.

The graph is read from what the team stored: the latest snapshot of
``#KnowledgeGraphTool``'s state, then every graph state event numbered after
it, applied in order. The pane returns a ``graph`` block (the page draws it as
SVG and filters it with a search box) and a table of the entities. Registered by
:mod:`akgentic_knowledge_graph.plugin` through ``akgentic_console_panes``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.plugin_api import ConsolePaneSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.plugin_api import PaneSource
    from akgentic_knowledge_graph.models import Entity, Relation

__all__ = ["akgentic_console_panes", "graph_items", "render_graph_pane"]


def graph_items(
    states: Sequence[Any], events: Sequence[Any]
) -> tuple[list[Entity], list[Relation]]:
    """Entities and relations as the stored snapshot and later graph events make them."""
    from akgentic.plugin_api import replay_tool_state
    from akgentic_knowledge_graph.models import (
        GRAPH_ACTOR_NAME,
        KnowledgeGraph,
        KnowledgeGraphStateEvent,
    )

    graph, changes = replay_tool_state(
        states,
        events,
        GRAPH_ACTOR_NAME,
        "knowledge_graph",
        KnowledgeGraph,
        KnowledgeGraphStateEvent,
    )
    entities: dict[UUID, Entity] = {}
    relations: dict[UUID, Relation] = {}
    if graph is not None:
        entities = {e.id: e for e in graph.entities}
        relations = {r.id: r for r in graph.relations}
    for change in changes:
        for entity in [*change.entities_added, *change.entities_modified]:
            entities[entity.id] = entity
        for entity_id in change.entities_removed:
            entities.pop(entity_id, None)
        for relation in [*change.relations_added, *change.relations_modified]:
            relations[relation.id] = relation
        for relation_id in change.relations_removed:
            relations.pop(relation_id, None)
    return list(entities.values()), list(relations.values())


def render_graph_pane(source: PaneSource) -> list[Mapping[str, Any]]:
    """A ``graph`` block of every entity and relation, then a table of the entities."""
    entities, relations = graph_items(source.states, source.events)
    if not entities:
        return [{"kind": "text", "text": "The graph has no entity yet."}]
    nodes = [
        {
            "id": e.name,
            "label": e.name,
            "group": e.entity_type,
            "text": " ".join([e.description, *e.observations]).strip(),
        }
        for e in entities
    ]
    edges = [
        {"source": r.from_entity, "target": r.to_entity, "label": r.relation_type}
        for r in relations
    ]
    rows = [
        [
            e.name,
            e.entity_type,
            e.description,
            "; ".join(e.observations),
            "root" if e.is_root else "",
        ]
        for e in entities
    ]
    return [
        {"kind": "text", "text": f"{len(entities)} entities · {len(relations)} relations"},
        {"kind": "graph", "nodes": nodes, "edges": edges},
        {
            "kind": "table",
            "columns": ["entity", "type", "description", "observations", ""],
            "rows": rows,
        },
    ]


@hookimpl
def akgentic_console_panes() -> Iterable[ConsolePaneSpec]:
    """The ``knowledge_graph`` card's pane of the web console."""
    return [
        ConsolePaneSpec(
            name="knowledge_graph",
            card="knowledge_graph",
            title="Knowledge graph",
            render=render_graph_pane,
        )
    ]
