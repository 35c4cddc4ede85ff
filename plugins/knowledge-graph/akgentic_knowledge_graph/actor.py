"""``KnowledgeGraphActor`` (``#KnowledgeGraphTool``): the team's single knowledge graph.

It applies :class:`ManageGraph` batches in the fixed order, keeps one vector row per
entity (and per described relation), and publishes every effective change as one
numbered :class:`ToolStateEvent` before the call returns or raises. The class path is
stored in event logs: never move it.
"""

from __future__ import annotations

import logging
from typing import Any

from akgentic.core.agent import Akgent
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.tool import RetriableError
from akgentic.tool.core.event import ToolStateEvent, ToolStateSequence
from akgentic_knowledge_graph.graph import GraphIndex, entity_text, relation_text
from akgentic_knowledge_graph.models import (
    COLLECTION,
    GRAPH_ACTOR_NAME,
    GetGraphQuery,
    GraphView,
    KnowledgeGraphConfig,
    KnowledgeGraphState,
    KnowledgeGraphStateEvent,
    ManageGraph,
    SearchQuery,
)
from akgentic_knowledge_graph.search import render, run_search
from akgentic_knowledge_graph.summary import KnowledgeGraphSummaryState, RootRow, short_description

__all__ = ["KnowledgeGraphActor"]

logger = logging.getLogger(__name__)

_STORE_TIMEOUT_S = 30.0
CHECKPOINT_EVERY = 200
"""State events between two published copies of the whole graph."""


class KnowledgeGraphActor(Akgent[KnowledgeGraphConfig, KnowledgeGraphState]):
    """Holds the team's graph; the only writer of it."""

    def on_start(self) -> None:
        """Empty graph; the store and embedder when the card configured one."""
        self.state = KnowledgeGraphState().observer(self)
        self._index = GraphIndex()
        self._events = ToolStateSequence(GRAPH_ACTOR_NAME)
        self._store: Any = None
        self._embedder: Any = None
        param = self.config.vector_store
        if param is None:
            return
        try:
            from akgentic.vector import build_backend, build_embedder, needs_store_actor
            from akgentic.vector.actor import find_store_actor

            if needs_store_actor(param):
                self._store = ProxyWrapper(find_store_actor(self), timeout=_STORE_TIMEOUT_S)
            else:
                self._store = build_backend(param, str(self.team_id))
            self._store.create_collection(COLLECTION, param)
            self._embedder = build_embedder(param)
        except Exception as error:  # the graph works keyword-only
            logger.warning("%s: semantic search is off (%s)", GRAPH_ACTOR_NAME, error)
            self._store = None
            self._embedder = None

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
            store=self._store,
            embedder=self._embedder,
            top_k_default=self.config.search_top_k,
            threshold_default=self.config.search_score_threshold,
            alpha=self.config.hybrid_alpha,
        )
        return render(outcome)

    # --------------------------------------------------------------- writes

    def update_graph(self, update: ManageGraph) -> str:
        """Apply ``update``; "Done", or RetriableError listing what failed."""
        done = self._index.apply(update)
        self._sync_vectors(done.unindex, done.embed_entities, done.embed_relations)
        if done.event.has_changes():
            self.notify_event(self._events.next_event(done.event))
            self.state.state_event_seq = self._events.last_seq
            if self.state.state_event_seq - self.state.snapshot_seq >= CHECKPOINT_EVERY:
                self._checkpoint()
        if done.errors:
            raise RetriableError("Update errors: " + "; ".join(done.errors))
        return "Done"

    def _sync_vectors(self, unindex: list[str], entities: list[Any], relations: list[Any]) -> None:
        if self._store is None:
            return
        try:
            if unindex:
                self._store.remove(COLLECTION, unindex)
            self._embed(entities, relations)
        except Exception as error:  # the graph change stands; rows heal on restore
            logger.warning("%s: vector rows not updated (%s)", GRAPH_ACTOR_NAME, error)

    def _embed(self, entities: list[Any], relations: list[Any]) -> None:
        if self._store is None or self._embedder is None:
            return
        rows = [("entity", str(e.id), entity_text(e)) for e in entities]
        rows += [("relation", str(r.id), relation_text(r)) for r in relations]
        if not rows:
            return
        from akgentic.vector import VectorEntry, embed_batched

        vectors = embed_batched(
            self._embedder,
            [text for _t, _i, text in rows],
            getattr(self._embedder, "max_batch", 256),
        )
        entries = [
            VectorEntry(ref_type=kind, ref_id=ref, text=text, vector=vector)
            for (kind, ref, text), vector in zip(rows, vectors, strict=True)
            if vector
        ]
        if entries:
            self._store.add(COLLECTION, entries)

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
        for message in events:
            event = message.event
            if not (isinstance(event, ToolStateEvent) and event.tool_id == GRAPH_ACTOR_NAME):
                continue
            payload = event.payload
            if event.seq <= last or not isinstance(payload, KnowledgeGraphStateEvent):
                continue
            self._index.replay(payload)
            last = event.seq
        if last == self.state.snapshot_seq:
            return
        self.state.state_event_seq = last
        self._events = ToolStateSequence(GRAPH_ACTOR_NAME, last)
        self._refresh_snapshot()
        self._heal()

    def _heal(self) -> None:
        if self._store is None:
            return
        try:
            described = [r for r in self._index.relations.values() if r.description.strip()]
            wanted = len(self._index.entities) + len(described)
            if int(self._store.count(COLLECTION)) < wanted:
                self._embed(list(self._index.entities.values()), described)
        except Exception as error:
            logger.warning("%s: vector rows not healed (%s)", GRAPH_ACTOR_NAME, error)
