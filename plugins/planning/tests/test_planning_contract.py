"""PlanningTool runs the shared ToolCardContract, as a member of a real team.

The card needs an orchestrator (``#PlanningTool`` is created under it), so the kit's
agent stand-in is given one: a live orchestrator in a real actor system.
"""

from __future__ import annotations

import pytest
from akgentic_planning import GetPlanning, PlanningTool, SearchPlanning

from akgentic.testing.tool_team import TeamToolCardContract
from akgentic.tool import ToolCard


class TestPlanningToolContract(TeamToolCardContract):
    """PlanningTool, registered as ``planning`` by this distribution's plugin."""

    card_name = "planning"
    plugin = "akgentic_planning.plugin"
    tool_arguments = {
        "update_planning": {"update": {"create_tasks": [{"id": 1, "description": "x"}]}},
        "get_planning_task": {"task_id": 1},
    }

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return PlanningTool(vector_store=False)
        return PlanningTool(
            vector_store=False,
            search_top_k=5,
            get_planning=GetPlanning(filter_by_agent=False),
            search_planning=SearchPlanning(instructions="Prefer {keyword} mode."),
        )
