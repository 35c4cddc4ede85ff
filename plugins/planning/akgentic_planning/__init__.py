"""The ``planning`` card: the team's shared task board.

Also importable as ``akgentic.tool.planning`` (a seed import path this plugin
serves). The actor module is imported only when a card binds it.
"""

from akgentic_planning.card import (
    GetPlanning,
    GetPlanningTask,
    PlanningTool,
    SearchPlanning,
    UpdatePlanning,
)
from akgentic_planning.models import (
    MAX_BATCH_ITEMS,
    MAX_DESCRIPTION_CHARS,
    MAX_OUTPUT_CHARS,
    PLANNING_ACTOR_NAME,
    PlanConfig,
    PlanManagerState,
    PlanningStateEvent,
    Task,
    TaskCreate,
    TaskStatus,
    TaskUpdate,
    UpdatePlan,
)
from akgentic_planning.search import SEMANTIC_DISABLED, SearchRequest
from akgentic_planning.state import MAX_FULL_ROWS, PlanningState, TaskRow

__all__ = [
    "MAX_BATCH_ITEMS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_FULL_ROWS",
    "MAX_OUTPUT_CHARS",
    "PLANNING_ACTOR_NAME",
    "SEMANTIC_DISABLED",
    "GetPlanning",
    "GetPlanningTask",
    "PlanConfig",
    "PlanManagerState",
    "PlanningState",
    "PlanningStateEvent",
    "PlanningTool",
    "SearchPlanning",
    "SearchRequest",
    "Task",
    "TaskCreate",
    "TaskRow",
    "TaskStatus",
    "TaskUpdate",
    "UpdatePlan",
    "UpdatePlanning",
]
