"""The tool document's Quick Start, with the cards that exist in this edition."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import ModelRetry


def test_the_quick_start_factory_serves_tools_prompts_states_and_commands(team: Any) -> None:
    search_module = pytest.importorskip("akgentic.tool.search")
    from akgentic.tool.planning import PlanningTool  # type: ignore[import-not-found]

    from akgentic.tool import ToolFactory

    agent = team.observer("@Agent")
    factory = ToolFactory(
        tool_cards=[PlanningTool(), search_module.SearchTool()],
        observer=agent,
        retry_exception=ModelRetry,
    )
    tools = factory.get_tools()
    prompts = factory.get_system_prompts()
    states = factory.get_context_states()
    commands = factory.get_commands()
    names = {tool.__name__ for tool in tools}
    assert {"update_planning", "get_planning_task", "search_planning"} <= names
    assert isinstance(prompts, list)
    assert [state.__name__ for state in states] == ["planning_state"]
    assert {c.__name__ for c in commands.values()} >= {"planning_summary", "search_planning"}
    (planning_state,) = states
    state = planning_state()
    assert state is not None and state.render_full() == "No current team planning."
