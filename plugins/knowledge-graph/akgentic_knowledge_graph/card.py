"""``KnowledgeGraphTool``: the team's shared graph of entities and relations.

Every agent carrying the card asks the same :class:`KnowledgeGraphActor`
(``#KnowledgeGraphTool``, created once through the orchestrator's get-or-create).
The model sees a summary sized by types and roots as context state, changes the
graph with ``update_graph`` and finds things with ``search_graph``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator

from akgentic.plugin_api import (
    COMMAND,
    LLM_CONTEXT,
    SAME_AS_TOOL,
    TOOL_CALL,
    ActorAddress,
    BaseToolParam,
    Capability,
    CapabilityCard,
    Channels,
    ContextState,
    RestOfLine,
    ToolObserver,
    VectorStoreParam,
    ask_tool_actor,
    create_tool_actor,
    model_input,
    normalize_system_prompt_to_llm_context,
    search_actor_config,
    semantic_switch,
)
from akgentic.plugin_api import SEMANTIC_DISABLED as SEMANTIC_DISABLED
from akgentic_knowledge_graph.models import (
    GRAPH_ACTOR_NAME,
    GraphView,
    KnowledgeGraphConfig,
    ManageGraph,
    SearchQuery,
)
from akgentic_knowledge_graph.search import check_query

__all__ = ["GetGraph", "KnowledgeGraphTool", "SearchGraph", "UpdateGraph", "render_graph"]

logger = logging.getLogger(__name__)

GONE = "The knowledge graph is unavailable; the agent is shutting down."


def render_graph(view: GraphView) -> str:
    """The whole-graph listing of the ``get_graph`` tool and command."""
    if not view.entities:
        return "Knowledge graph is empty."
    lines = ["Knowledge Graph:", "Entities:"]
    lines += [f"  - {e.name} ({e.entity_type}): {e.description}" for e in view.entities]
    if view.relations:
        lines.append("Relations:")
        for r in view.relations:
            note = f" — {r.description}" if r.description else ""
            lines.append(f"  - {r.from_entity} --[{r.relation_type}]--> {r.to_entity}{note}")
    return "\n".join(lines)


class GetGraph(BaseToolParam):
    """The summary as context state and ``/get_graph``.

    Attributes:
        prompt_include_schema: List the entity and relation types.
        prompt_include_roots: List the root entities.
    """

    expose: set[Channels] = Field(default_factory=lambda: {LLM_CONTEXT, COMMAND})
    prompt_include_schema: bool = True
    prompt_include_roots: bool = True

    @field_validator("expose")
    @classmethod
    def _moved_to_context(cls, value: set[Channels]) -> set[Channels]:
        return normalize_system_prompt_to_llm_context(value)


class UpdateGraph(BaseToolParam):
    """``update_graph(update)``: change the graph (never a command)."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL})


class SearchGraph(BaseToolParam):
    """``search_graph(query)`` for the model, ``/search_graph`` for people."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})


class KnowledgeGraphTool(CapabilityCard):
    """The team's knowledge graph: entities, relations, search and a summary.

    Example YAML in a team file::

        tools:
          - card: knowledge_graph
            read_only: true
    """

    vector_store: VectorStoreParam | bool = True
    search_top_k: int = Field(default=10, ge=1, le=100)
    search_score_threshold: float = Field(default=0.3, ge=0.0, le=1.0)
    hybrid_alpha: float = Field(default=0.7, ge=0.0, le=1.0)
    get_graph: GetGraph | bool = True
    update_graph: UpdateGraph | bool = True
    search: SearchGraph | bool = True
    read_only: bool = False

    _actor: ActorAddress | None = PrivateAttr(default=None)
    _semantic_off: str | None = PrivateAttr(default=None)

    def observer(self, observer: ToolObserver) -> KnowledgeGraphTool:
        """Check the store, then create (or find) ``#KnowledgeGraphTool``.

        Raises:
            ValueError: The store param fails its checks, or there is no orchestrator.
        """
        from akgentic.plugin_api import bind_store

        binding = bind_store("KnowledgeGraphTool", self.vector_store)
        super().observer(observer)
        param, self._semantic_off = semantic_switch(binding)
        from akgentic_knowledge_graph.actor import KnowledgeGraphActor

        config = search_actor_config(KnowledgeGraphConfig, GRAPH_ACTOR_NAME, param, self)
        self._actor = create_tool_actor(
            observer, KnowledgeGraphActor, config, param, "KnowledgeGraphTool"
        )
        return self

    def _ask(self, call: Callable[[Any], Any]) -> Any:
        return ask_tool_actor(self._observer_or_none(), self._actor, call, GONE)

    def _search(self, query: SearchQuery) -> str:
        checked = check_query(query)
        if checked.mode == "vector" and self._semantic_off:
            return self._semantic_off
        return str(self._ask(lambda actor: actor.search(checked)))

    # ---------------------------------------------------------- builders

    def _build_get_graph(self, param: GetGraph) -> Callable[..., str]:
        def get_graph() -> str:
            """Show the whole knowledge graph: every entity and relation."""
            view: GraphView = self._ask(lambda actor: actor.get_graph(None))
            return render_graph(view)

        return get_graph

    def _build_update(self, param: UpdateGraph) -> Callable[..., str]:
        def update_graph(update: ManageGraph) -> str:
            """Change the knowledge graph in one batch.

            Applied in this order: create entities, create relations, update
            entities, delete relations, delete entities (deleting an entity deletes
            its relations). Entities are named; names are unique. A relation joins
            two existing entities and is unique by (from, to, type).

            Args:
                update: The entities and relations to create, update and delete.
            """
            batch = model_input(update, ManageGraph, "update")
            return str(self._ask(lambda actor: actor.update_graph(batch)))

        return update_graph

    def _build_search_tool(self, param: SearchGraph) -> Callable[..., str]:
        def search_graph(query: SearchQuery) -> str:
            """Search the knowledge graph by words, by meaning, or both (the default).

            Turn on include_neighbors, include_edges or find_paths to also see the
            entities next to the hits, the relations touching them, or the shortest
            paths between them.

            Args:
                query: The search text, the mode, the budgets and the expansions.
            """
            return self._search(model_input(query, SearchQuery, "search"))

        return search_graph

    def _build_search_command(self, param: SearchGraph) -> Callable[..., str]:
        def search_graph(
            mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
            top_k: int | None = None,
            include_neighbors: bool = False,
            include_edges: bool = False,
            find_paths: bool = False,
            score_threshold: float | None = None,
            *,
            query: RestOfLine,
        ) -> str:
            """Search the knowledge graph, e.g. ``/search_graph mode=keyword mailing list``.

            Args:
                mode: hybrid, vector or keyword.
                top_k: At most this many hits.
                include_neighbors: Also list the hits' neighbours.
                include_edges: Also list the relations touching the hits.
                find_paths: Also list paths between the hits.
                score_threshold: Minimum semantic score.
                query: The words to search for (the rest of the line).
            """
            return self._search(
                SearchQuery(
                    query=str(query),
                    mode=mode,
                    top_k=top_k,
                    score_threshold=score_threshold,
                    include_neighbors=include_neighbors,
                    include_edges=include_edges,
                    find_paths=find_paths,
                )
            )

        return search_graph

    # ------------------------------------------------------------ hooks

    def capabilities(self) -> list[Capability]:
        """The graph's tools and commands; a read-only card cannot change the graph."""
        return [
            Capability("get_graph", self._build_get_graph, SAME_AS_TOOL),
            *([] if self.read_only else [Capability("update_graph", self._build_update)]),
            Capability(
                "search",
                self._build_search_tool,
                self._build_search_command,
                name="search_graph",
                command_instructions=True,
            ),
        ]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        param = self._param(self.get_graph, GetGraph, LLM_CONTEXT)
        if param is None:
            return []
        schema, roots = param.prompt_include_schema, param.prompt_include_roots

        def knowledge_graph_summary_state() -> ContextState | None:
            try:
                state: ContextState = self._ask(lambda actor: actor.summary(schema, roots))
                return state
            except Exception:
                logger.debug("knowledge graph summary unavailable", exc_info=True)
                return None

        return [knowledge_graph_summary_state]
