"""``KnowledgeGraphActor`` (``#KnowledgeGraphTool``): the team's single knowledge graph.

It applies :class:`ManageGraph` batches in the fixed order, keeps one vector row per
entity (and per described relation), and publishes every effective change as one
numbered :class:`ToolStateEvent` before the call returns or raises. The class path is
stored in event logs: never move it.
"""

from __future__ import annotations

from akgentic.plugin_api import (
    Akgent,
    EventMessage,
    RetriableError,
    Row,
    ToolStateSequence,
    VectorRows,
    state_events_after,
)
from akgentic_knowledge_graph.graph import GraphIndex, entity_text, relation_text
from akgentic_knowledge_graph.models import (
    COLLECTION,
    GRAPH_ACTOR_NAME,
    Entity,
    GetGraphQuery,
    GraphView,
    KnowledgeGraphConfig,
    KnowledgeGraphState,
    KnowledgeGraphStateEvent,
    ManageGraph,
    Relation,
    SearchQuery,
)
from akgentic_knowledge_graph.search import render, run_search
from akgentic_knowledge_graph.summary import KnowledgeGraphSummaryState, RootRow, short_description

__all__ = ["KnowledgeGraphActor"]

CHECKPOINT_EVERY = 200
"""State events between two published copies of the whole graph."""


class KnowledgeGraphActor(Akgent[KnowledgeGraphConfig, KnowledgeGraphState]):
    """Holds the team's graph; the only writer of it."""

    def on_start(self) -> None:
        """Empty graph; the store and embedder when the card configured one."""
        self.state = KnowledgeGraphState().observer(self)
        self._index = GraphIndex()
        self._events = ToolStateSequence(GRAPH_ACTOR_NAME)
        self._rows = VectorRows(self, self.config.vector_store, COLLECTION, GRAPH_ACTOR_NAME)

    # ---------------------------------------------------------------- reads

    def get_graph(self, query: GetGraphQuery | None = None) -> GraphView:
        """The subgraph ``query`` selects (copies)."""
        return self._index.get_graph(query).model_copy(deep=True)

    def summary(self, include_schema: bool, include_roots: bool) -> KnowledgeGraphSummaryState:
        """Counts, types and roots: O(types + roots), whatever the graph's size."""
        index = self._index
        roots = sorted(
            (
                RootRow(
                    name=e.name,
                    entity_type=e.entity_type,
                    description=short_description(e.description),
                )
                for e in (index.entities[n] for n in index.roots)
            ),
            key=lambda r: r.name,
        )
        return KnowledgeGraphSummaryState(
            entity_count=len(index.entities),
            relation_count=len(index.relations),
            entity_types=sorted(index.entity_types),
            relation_types=sorted(index.relation_types),
            roots=roots,
            include_schema=include_schema,
            include_roots=include_roots,
        )

    def search(self, query: SearchQuery) -> str:
        """The rendered results of a checked ``query``."""
        outcome = run_search(
            self._index,
            query,
            store=self._rows.store,
            embedder=self._rows.embedder,
            top_k_default=self.config.search_top_k,
            threshold_default=self.config.search_score_threshold,
            alpha=self.config.hybrid_alpha,
        )
        return render(outcome)

    # --------------------------------------------------------------- writes

    def update_graph(self, update: ManageGraph) -> str:
        """Apply ``update``; "Done", or RetriableError listing what failed."""
        done = self._index.apply(update)
        self._rows.sync(done.unindex, _rows(done.embed_entities, done.embed_relations))
        if done.event.has_changes():
            self.notify_event(self._events.next_event(done.event))
            self.state.state_event_seq = self._events.last_seq
            if self.state.state_event_seq - self.state.snapshot_seq >= CHECKPOINT_EVERY:
                self._checkpoint()
        if done.errors:
            raise RetriableError("Update errors: " + "; ".join(done.errors))
        return "Done"

    # ----------------------------------------------------------- checkpoint

    def _checkpoint(self) -> None:
        """Copy the graph into the state and publish it (bounds the replay on restore)."""
        self._refresh_snapshot()
        self.state.notify_state_change()

    def _refresh_snapshot(self) -> None:
        self.state.knowledge_graph = self._index.snapshot()
        self.state.snapshot_seq = self.state.state_event_seq

    def on_stop(self) -> None:
        """The stop checkpoint carries the current graph."""
        self._refresh_snapshot()
        super().on_stop()

    # -------------------------------------------------------------- restore

    def init_state(self, state: KnowledgeGraphState) -> None:
        """Take the saved graph and event number; re-embed rows the store lost."""
        super().init_state(state)
        self._index = GraphIndex(self.state.knowledge_graph)
        self._events = ToolStateSequence(GRAPH_ACTOR_NAME, self.state.state_event_seq)
        self._heal()

    def init_llm_context(self, events: list[EventMessage]) -> None:
        """Replay the graph's own state events newer than the checkpoint, in order."""
        last = self.state.snapshot_seq
        for seq, payload in state_events_after(
            events, GRAPH_ACTOR_NAME, last, KnowledgeGraphStateEvent
        ):
            self._index.replay(payload)
            last = seq
        if last == self.state.snapshot_seq:
            return
        self.state.state_event_seq = last
        self._events = ToolStateSequence(GRAPH_ACTOR_NAME, last)
        self._refresh_snapshot()
        self._heal()

    def _heal(self) -> None:
        index = self._index
        self._rows.heal(
            lambda: _rows(
                list(index.entities.values()),
                [r for r in index.relations.values() if r.description.strip()],
            )
        )


def _rows(entities: list[Entity], relations: list[Relation]) -> list[Row]:
    """The vector rows of ``entities`` and (described) ``relations``."""
    rows: list[Row] = [("entity", str(e.id), entity_text(e)) for e in entities]
    rows += [("relation", str(r.id), relation_text(r)) for r in relations]
    return rows
