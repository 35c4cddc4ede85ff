"""``PlanningState``: the board as one agent's model sees it, in full or as a delta."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from akgentic.plugin_api import ContextState
from akgentic_planning.models import Task

__all__ = ["MAX_FULL_ROWS", "PlanningState", "TaskRow", "build_state"]

MAX_FULL_ROWS = 50
"""Rows a full rendering lists; past this it counts the rest and points at search."""

FOOTER = "Use get_planning_task(id) for exact ID lookup or search_planning(...) to filter tasks."


class TaskRow(BaseModel):
    """One visible task (what the model needs to act on it)."""

    model_config = ConfigDict(frozen=True)

    id: int
    status: str
    description: str
    owner: str = ""
    creator: str = ""
    output: str = ""


def _owner(owner: str) -> str:
    return owner or "unassigned"


def _row_line(row: TaskRow) -> str:
    output = f" — Output: {row.output}" if row.output else ""
    return (
        f"- ID {row.id} [{row.status}] {row.description}{output} "
        f"(Owner: {_owner(row.owner)}, Creator: {row.creator})"
    )


class PlanningState(ContextState):
    """Totals over the whole board, and the rows this agent sees."""

    total: int = 0
    owner_counts: dict[str, int] = Field(default_factory=dict)
    tasks: list[TaskRow] = Field(default_factory=list)
    agent_name: str = ""
    filter_by_agent: bool = True

    def render_full(self) -> str:
        if self.total == 0:
            return "No current team planning."
        named = sorted(k for k in self.owner_counts if k != "unassigned")
        owners = [f"{k}: {self.owner_counts[k]}" for k in named]
        if "unassigned" in self.owner_counts:
            owners.append(f"unassigned: {self.owner_counts['unassigned']}")
        lines = [f"**Team planning:** {self.total} task(s) total", "Owners: " + " | ".join(owners)]
        lines.append("")
        if self.filter_by_agent and not self.tasks:
            lines.append(f"No tasks assigned to or created by {self.agent_name} yet.")
        else:
            heading = (
                f"**Your tasks** (owner or creator: {self.agent_name}):"
                if self.filter_by_agent
                else "**All tasks:**"
            )
            lines.append(heading)
            lines += [_row_line(row) for row in self.tasks[:MAX_FULL_ROWS]]
            hidden = len(self.tasks) - MAX_FULL_ROWS
            if hidden > 0:
                lines.append(f"- … and {hidden} more task(s) not listed here.")
        lines += ["", FOOTER]
        return "\n".join(lines)

    def render_delta(self, previous: PlanningState) -> str | None:
        parts: list[str] = []
        if previous.total != self.total:
            parts.append(f"{self.total} tasks total.")
        before = {row.id: row for row in previous.tasks}
        now = {row.id: row for row in self.tasks}
        for row in self.tasks:
            old = before.get(row.id)
            if old is None:
                parts.append(
                    f"New: ID {row.id} [{row.status}] {row.description} "
                    f"(Owner: {_owner(row.owner)}, Creator: {row.creator})."
                )
                continue
            if old == row:
                continue
            if old.status != row.status:
                parts.append(
                    f"ID {row.id} [{old.status}] → [{row.status}] (Owner: {_owner(row.owner)})."
                )
            if old.owner != row.owner:
                parts.append(f"ID {row.id} owner: {_owner(old.owner)} → {_owner(row.owner)}.")
            if old.description != row.description:
                parts.append(f"ID {row.id} description: {row.description}.")
            if old.output != row.output:
                parts.append(
                    f"ID {row.id} output: {row.output}."
                    if row.output
                    else f"ID {row.id} output cleared."
                )
        for row in previous.tasks:
            if row.id not in now:
                parts.append(f"Removed: ID {row.id} [{row.status}] {row.description}.")
        return " ".join(parts) if parts else None


def _visible(task: Task, me: str) -> bool:
    # An unassigned task I created stays hidden: the view is what I own or handed out.
    return task.owner == me or (task.owner != "" and task.creator == me)


def build_state(tasks: list[Task], agent_name: str, filter_by_agent: bool) -> PlanningState:
    """The context state of ``agent_name`` over ``tasks`` (board order)."""
    counts: dict[str, int] = {}
    for task in tasks:
        key = task.owner or "unassigned"
        counts[key] = counts.get(key, 0) + 1
    shown = [t for t in tasks if _visible(t, agent_name)] if filter_by_agent else tasks
    rows = [
        TaskRow(
            id=t.id,
            status=t.status,
            description=t.description,
            owner=t.owner,
            creator=t.creator,
            output=t.output,
        )
        for t in shown
    ]
    return PlanningState(
        total=len(tasks),
        owner_counts=counts,
        tasks=rows,
        agent_name=agent_name,
        filter_by_agent=filter_by_agent,
    )
