"""``PlanActor`` (``#PlanningTool``): the team's single task board.

Every agent's planning card asks this actor; it applies batches in the fixed order
(creates, updates, deletes), keeps one vector row per task description, and
publishes each effective change as one numbered :class:`ToolStateEvent` before the
call returns or raises. The class path is stored in event logs: never move it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from akgentic.plugin_api import (
    Akgent,
    EventMessage,
    KeywordIndex,
    RetriableError,
    Row,
    ToolStateSequence,
    VectorRows,
    state_events_after,
)
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
        self._rows = VectorRows(self, self.config.vector_store, COLLECTION, PLANNING_ACTOR_NAME)

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
        return self._rows.store is not None and self._rows.embedder is not None

    def search(self, request: SearchRequest) -> list[str]:
        """Lines of the tasks matching ``request`` (see :func:`search_tasks`)."""
        lines: list[str] = search_tasks(
            self.state.task_list,
            request,
            store=self._rows.store,
            embedder=self._rows.embedder,
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
        self._rows.sync([str(i) for i in sorted(to_unindex)], _rows(fresh))
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
        for seq, payload in state_events_after(
            events, PLANNING_ACTOR_NAME, last, PlanningStateEvent
        ):
            for task in [*payload.tasks_added, *payload.tasks_modified]:
                tasks[task.id] = task
            for task_id in payload.tasks_removed:
                tasks.pop(task_id, None)
            last = seq
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
        self._rows.heal(lambda: _rows(self.state.task_list))


def _rows(tasks: list[Task]) -> list[Row]:
    """The vector rows of ``tasks`` (a blank description has none)."""
    return [("task", str(t.id), t.description) for t in tasks if t.description.strip()]
