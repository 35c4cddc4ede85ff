"""``PlanActor`` (``#PlanningTool``): the team's single task board.

Every agent's planning card asks this actor; it applies batches in the fixed order
(creates, updates, deletes), keeps one vector row per task description, and
publishes each effective change as one numbered :class:`ToolStateEvent` before the
call returns or raises. The class path is stored in event logs: never move it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from akgentic.core.agent import Akgent
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.tool import RetriableError
from akgentic.tool.core.event import ToolStateEvent, ToolStateSequence
from akgentic.tool.keyword_index import KeywordIndex
from akgentic_planning.models import (
    COLLECTION,
    PLANNING_ACTOR_NAME,
    PlanConfig,
    PlanManagerState,
    PlanningStateEvent,
    Task,
    UpdatePlan,
)
from akgentic_planning.search import SearchRequest, search_tasks
from akgentic_planning.state import PlanningState, build_state

__all__ = ["PlanActor"]

logger = logging.getLogger(__name__)

_STORE_TIMEOUT_S = 30.0


def _now() -> datetime:
    return datetime.now(UTC)


class PlanActor(Akgent[PlanConfig, PlanManagerState]):
    """Holds the team's tasks; the only writer of the board."""

    def on_start(self) -> None:
        """Empty board; the store and embedder when the card configured one."""
        self.state = PlanManagerState().observer(self)
        self._index: dict[int, int] = {}
        self._words: KeywordIndex[int] = KeywordIndex()
        self._events = ToolStateSequence(PLANNING_ACTOR_NAME)
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
        except Exception as error:  # search degrades to keyword-only, the board still works
            logger.warning("%s: semantic search is off (%s)", PLANNING_ACTOR_NAME, error)
            self._store = None
            self._embedder = None

    # ---------------------------------------------------------------- reads

    def get_tasks(self) -> list[Task]:
        """Every task, in board order (copies)."""
        return [t.model_copy(deep=True) for t in self.state.task_list]

    def get_task(self, task_id: int) -> Task | None:
        """The task with ``task_id``, or None."""
        position = self._index.get(task_id)
        return None if position is None else self.state.task_list[position].model_copy(deep=True)

    def get_view(self, agent_name: str, filter_by_agent: bool) -> PlanningState:
        """The context state of ``agent_name``."""
        return build_state(self.state.task_list, agent_name, filter_by_agent)

    def semantic_ready(self) -> bool:
        """True when a store and an embedder are wired (vector and hybrid search work)."""
        return self._store is not None and self._embedder is not None

    def search(self, request: SearchRequest) -> list[str]:
        """Lines of the tasks matching ``request`` (see :func:`search_tasks`)."""
        lines: list[str] = search_tasks(
            self.state.task_list,
            request,
            store=self._store,
            embedder=self._embedder,
            top_k_default=self.config.search_top_k,
            threshold_default=self.config.search_score_threshold,
            alpha=self.config.hybrid_alpha,
            words=self._words,
            positions=self._index,
        )
        return lines

    # --------------------------------------------------------------- writes

    def update_planning(self, update: UpdatePlan, creator: str) -> str:
        """Apply ``update`` for the agent named ``creator``; "Done" or RetriableError.

        Every part that succeeds stays applied; the errors are reported together.
        """
        errors: list[str] = []
        tasks = self.state.task_list
        added: dict[int, Task] = {}
        modified: dict[int, Task] = {}
        removed: list[int] = []
        to_embed: set[int] = set()
        to_unindex: set[int] = set()
        now = _now()

        batch_ids = {c.id for c in update.create_tasks}
        for create in update.create_tasks:
            if create.id in self._index:
                errors.append(f"Create error - task ID {create.id} already exists.")
                continue
            dangling = sorted(
                {
                    d
                    for d in create.dependencies
                    if d == create.id or (d not in self._index and d not in batch_ids)
                }
            )
            if dangling:
                errors.append(
                    f"Dependency error - task {create.id} depends on unknown task(s) {dangling}."
                )
                continue
            task = Task(
                id=create.id,
                status=create.status,
                description=create.description,
                owner=create.owner,
                dependencies=list(create.dependencies),
                creator=creator,
                updated_at=now,
            )
            self._index[task.id] = len(tasks)
            tasks.append(task)
            self._words.put(task.id, [task.description])
            added[task.id] = task
            to_embed.add(task.id)
        # A create refused for its dependencies leaves its id free; forget it.
        batch_ids &= set(added)

        for change in update.update_tasks:
            position = self._index.get(change.id)
            if position is None:
                errors.append(f"Update error - no task with ID {change.id} found.")
                continue
            if change.dependencies is not None:
                dangling = sorted(
                    {d for d in change.dependencies if d not in self._index or d == change.id}
                )
                if dangling:
                    errors.append(
                        f"Dependency error - task {change.id} depends on unknown task(s) "
                        f"{dangling}."
                    )
                    continue
            old = tasks[position]
            fields = change.model_dump(exclude_none=True, exclude={"id"})
            changed = {k: v for k, v in fields.items() if getattr(old, k) != v}
            if not changed:
                continue
            new = old.model_copy(update={**changed, "updated_at": now})
            tasks[position] = new
            if "description" in changed:
                self._words.put(new.id, [new.description])
                to_unindex.add(new.id)
                to_embed.add(new.id)
            if new.id in added:
                added[new.id] = new
            else:
                modified[new.id] = new

        doomed: list[int] = []
        for task_id in update.delete_tasks:
            if task_id not in self._index or task_id in doomed:
                errors.append(f"Delete error - no task with ID {task_id} found.")
                continue
            doomed.append(task_id)
        if doomed:
            gone = set(doomed)
            self.state.task_list = tasks = [t for t in tasks if t.id not in gone]
            self._index = {t.id: i for i, t in enumerate(tasks)}
            for task_id in doomed:
                self._words.discard(task_id)
                to_embed.discard(task_id)
                if added.pop(task_id, None) is None:
                    modified.pop(task_id, None)
                    removed.append(task_id)
            to_unindex |= gone

        fresh = [self.state.task_list[self._index[i]] for i in sorted(to_embed)]
        self._sync_vectors(sorted(to_unindex), fresh)
        event = PlanningStateEvent(
            tasks_added=[t.model_copy(deep=True) for t in added.values()],
            tasks_modified=[t.model_copy(deep=True) for t in modified.values()],
            tasks_removed=removed,
        )
        if event.has_changes():
            self.notify_event(self._events.next_event(event))
            # The board in the state is live, so any checkpoint reflects this event.
            self.state.state_event_seq = self.state.snapshot_seq = self._events.last_seq
        if errors:
            raise RetriableError("Update errors: " + "; ".join(errors))
        return "Done"

    # -------------------------------------------------------------- vectors

    def _sync_vectors(self, unindex: list[int], embed: list[Task]) -> None:
        if self._store is None:
            return
        try:
            if unindex:
                self._store.remove(COLLECTION, [str(i) for i in unindex])
            self._embed(embed)
        except Exception as error:  # the board change stands; the rows heal on restore
            logger.warning("%s: vector rows not updated (%s)", PLANNING_ACTOR_NAME, error)

    def _embed(self, tasks: list[Task]) -> None:
        tasks = [t for t in tasks if t.description.strip()]
        if not tasks or self._store is None or self._embedder is None:
            return
        from akgentic.vector import VectorEntry, embed_batched

        texts = [t.description for t in tasks]
        vectors = embed_batched(self._embedder, texts, getattr(self._embedder, "max_batch", 256))
        entries = [
            VectorEntry(ref_type="task", ref_id=str(t.id), text=t.description, vector=v)
            for t, v in zip(tasks, vectors, strict=True)
            if v
        ]
        if entries:
            self._store.add(COLLECTION, entries)

    # -------------------------------------------------------------- restore

    def init_state(self, state: PlanManagerState) -> None:
        """Take the saved board and event number; re-embed rows the store lost."""
        super().init_state(state)
        self._reindex()
        self._events = ToolStateSequence(PLANNING_ACTOR_NAME, self.state.state_event_seq)
        self._heal()

    def init_llm_context(self, events: list[EventMessage]) -> None:
        """Replay the board's own state events newer than the checkpoint, in order."""
        tasks = {t.id: t for t in self.state.task_list}
        last = self.state.snapshot_seq
        for message in events:
            event = message.event
            if not (isinstance(event, ToolStateEvent) and event.tool_id == PLANNING_ACTOR_NAME):
                continue
            payload = event.payload
            if event.seq <= last or not isinstance(payload, PlanningStateEvent):
                continue
            for task in [*payload.tasks_added, *payload.tasks_modified]:
                tasks[task.id] = task
            for task_id in payload.tasks_removed:
                tasks.pop(task_id, None)
            last = event.seq
        if last == self.state.snapshot_seq:
            return
        self.state.task_list = list(tasks.values())
        self.state.state_event_seq = self.state.snapshot_seq = last
        self._reindex()
        self._events = ToolStateSequence(PLANNING_ACTOR_NAME, last)
        self._heal()

    def _reindex(self) -> None:
        self._index = {t.id: i for i, t in enumerate(self.state.task_list)}
        self._words = KeywordIndex()
        for task in self.state.task_list:
            self._words.put(task.id, [task.description])

    def _heal(self) -> None:
        if self._store is None:
            return
        try:
            indexed = int(self._store.count(COLLECTION))
            wanted = [t for t in self.state.task_list if t.description.strip()]
            if indexed < len(wanted):
                self._embed(wanted)
        except Exception as error:
            logger.warning("%s: vector rows not healed (%s)", PLANNING_ACTOR_NAME, error)
