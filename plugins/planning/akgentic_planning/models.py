"""The task board's models: tasks, the batch update, the actor's state, config and events.

The class paths of :class:`Task`, :class:`PlanManagerState`, :class:`PlanConfig` and
:class:`PlanningStateEvent` are written into stored event logs: never move or rename
them (the original's paths are registered as aliases by the plugin).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from akgentic.plugin_api import BaseState, SearchActorConfig, SerializableBaseModel

__all__ = [
    "COLLECTION",
    "MAX_BATCH_ITEMS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_OUTPUT_CHARS",
    "MAX_OWNER_CHARS",
    "PLANNING_ACTOR_NAME",
    "PlanConfig",
    "PlanManagerState",
    "PlanningStateEvent",
    "Task",
    "TaskCreate",
    "TaskStatus",
    "TaskUpdate",
    "UpdatePlan",
]

PLANNING_ACTOR_NAME = "#PlanningTool"
"""Name of the team's single planning actor."""

COLLECTION = "planning"
"""Vector collection holding one row per task description."""

MAX_DESCRIPTION_CHARS = 300
MAX_OUTPUT_CHARS = 150
MAX_OWNER_CHARS = 200
MAX_BATCH_ITEMS = 500
"""Most creates, updates or deletes one ``UpdatePlan`` may carry (each list)."""

TaskStatus = Literal["pending", "started", "completed", "abort"]


def _cut_output(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_OUTPUT_CHARS:
        return value[: MAX_OUTPUT_CHARS - 3] + "..."
    return value


class TaskCreate(BaseModel):
    """A task to add: the model picks its integer id; ``owner=""`` leaves it unassigned."""

    model_config = ConfigDict(extra="forbid")

    id: int
    status: TaskStatus = "pending"
    description: str = Field(max_length=MAX_DESCRIPTION_CHARS)
    owner: str = Field(default="", max_length=MAX_OWNER_CHARS)
    dependencies: list[int] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)


class TaskUpdate(BaseModel):
    """Changes to one task; only the fields given (not None) apply."""

    model_config = ConfigDict(extra="forbid")

    id: int
    status: TaskStatus | None = None
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    output: str | None = Field(default=None, max_length=MAX_OUTPUT_CHARS)
    owner: str | None = Field(default=None, max_length=MAX_OWNER_CHARS)
    dependencies: list[int] | None = Field(default=None, max_length=MAX_BATCH_ITEMS)

    @field_validator("output", mode="before")
    @classmethod
    def _shorten_output(cls, value: Any) -> Any:
        return _cut_output(value)


class Task(SerializableBaseModel):
    """A task on the board (stored: no length limits, so every saved board loads)."""

    id: int
    status: TaskStatus = "pending"
    description: str = ""
    owner: str = ""
    dependencies: list[int] = Field(default_factory=list)
    output: str = ""
    creator: str = ""
    updated_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class UpdatePlan(BaseModel):
    """One batch of board changes, applied as creates, then updates, then deletes."""

    model_config = ConfigDict(extra="forbid")

    create_tasks: list[TaskCreate] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    update_tasks: list[TaskUpdate] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)
    delete_tasks: list[int] = Field(default_factory=list, max_length=MAX_BATCH_ITEMS)


class PlanningStateEvent(SerializableBaseModel):
    """The payload of a ``#PlanningTool`` state event: only what really changed."""

    tasks_added: list[Task] = Field(default_factory=list)
    tasks_modified: list[Task] = Field(default_factory=list)
    tasks_removed: list[int] = Field(default_factory=list)

    def has_changes(self) -> bool:
        """True when the event carries at least one change."""
        return bool(self.tasks_added or self.tasks_modified or self.tasks_removed)


class PlanManagerState(BaseState):
    """The board, in board order, and the number of the last state event sent.

    ``snapshot_seq`` is the event the board reflects: a checkpoint taken when the
    actor stops (or fails a turn) is current; a restore replays the state events
    after it, so a board change never has to re-serialise the whole board.
    """

    task_list: list[Task] = Field(default_factory=list)
    state_event_seq: int = 0
    snapshot_seq: int = 0


class PlanConfig(SearchActorConfig):
    """Settings of ``#PlanningTool``, fixed by the first card that creates it."""

    search_score_threshold: float = 0.5
