"""The planning board's pane of the web console: tasks by status, with owner and deps.

The board is read from what the team stored: the latest snapshot of
``#PlanningTool``'s state, then every planning state event numbered after that
snapshot, applied in order (so the pane is current even between checkpoints).
Registered by :mod:`akgentic_planning.plugin` through ``akgentic_console_panes``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import ConsolePaneSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.plugin_api import PaneSource
    from akgentic_planning.models import Task

__all__ = ["akgentic_console_panes", "board_tasks", "render_planning_pane"]

#: The order statuses are shown in; any other status follows, alphabetically.
STATUS_ORDER = ("started", "pending", "completed", "abort")


def board_tasks(states: Sequence[Any], events: Sequence[Any]) -> list[Task]:
    """The board as the stored snapshot and later planning events make it, by task id."""
    from akgentic.plugin_api import replay_tool_state
    from akgentic_planning.models import PLANNING_ACTOR_NAME, PlanningStateEvent

    task_list, changes = replay_tool_state(
        states, events, PLANNING_ACTOR_NAME, "task_list", list, PlanningStateEvent
    )
    tasks: dict[int, Task] = {t.id: t for t in task_list or []}
    for change in changes:
        for task in [*change.tasks_added, *change.tasks_modified]:
            tasks[task.id] = task
        for task_id in change.tasks_removed:
            tasks.pop(task_id, None)
    return [tasks[key] for key in sorted(tasks)]


def _status_rank(status: str) -> tuple[int, str]:
    return (
        (STATUS_ORDER.index(status), "") if status in STATUS_ORDER else (len(STATUS_ORDER), status)
    )


def render_planning_pane(source: PaneSource) -> list[Mapping[str, Any]]:
    """One heading and one table per status: id, task, owner, dependencies, output."""
    tasks = board_tasks(source.states, source.events)
    if not tasks:
        return [{"kind": "text", "text": "The board has no task yet."}]
    by_status: dict[str, list[Task]] = {}
    for task in tasks:
        by_status.setdefault(str(task.status), []).append(task)
    blocks: list[Mapping[str, Any]] = []
    for status in sorted(by_status, key=_status_rank):
        group = by_status[status]
        blocks.append({"kind": "text", "text": f"{status} · {len(group)}"})
        rows = [
            [
                f"#{t.id}",
                t.description,
                t.owner or "(unassigned)",
                ", ".join(f"#{d}" for d in t.dependencies) or "—",
                t.output,
            ]
            for t in group
        ]
        blocks.append(
            {
                "kind": "table",
                "columns": ["id", "task", "owner", "depends on", "output"],
                "rows": rows,
            }
        )
    return blocks


def planning_state(source: PaneSource) -> list[dict[str, Any]]:
    """The board as JSON data, by task id (what AG-UI shares as ``planning``)."""
    return [
        {
            "id": task.id,
            "status": str(task.status),
            "description": task.description,
            "owner": task.owner,
            "creator": task.creator,
            "dependencies": list(task.dependencies),
            "output": task.output,
        }
        for task in board_tasks(source.states, source.events)
    ]


@hookimpl
def akgentic_console_panes() -> Iterable[ConsolePaneSpec]:
    """The ``planning`` card's pane of the web console."""
    return [
        ConsolePaneSpec(
            name="planning",
            card="planning",
            title="Planning board",
            render=render_planning_pane,
            state=planning_state,
        )
    ]
