"""PlanningTool runs the shared ToolCardContract, as a member of a real team.

The card needs an orchestrator (``#PlanningTool`` is created under it), so the kit's
agent stand-in is given one: a live orchestrator in a real actor system.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from akgentic_planning import GetPlanning, PlanningTool, SearchPlanning

from akgentic.core import ActorSystem, BaseConfig, Orchestrator
from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard, ToolObserver

from .conftest import TeamObserver


class TestPlanningToolContract(ToolCardContract):
    """PlanningTool, registered as ``planning`` by this distribution's plugin."""

    card_name = "planning"
    plugin = "akgentic_planning.plugin"
    tool_arguments = {
        "update_planning": {"update": {"create_tasks": [{"id": 1, "description": "x"}]}},
        "get_planning_task": {"task_id": 1},
    }

    @pytest.fixture(autouse=True)
    def _system(self) -> Iterator[None]:
        system = ActorSystem()
        self._orchestrator: Any = system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        yield
        system.shutdown(timeout=10)

    def make_observer(self) -> ToolObserver:
        return TeamObserver(self._orchestrator)

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
