"""A fork's board is the board as it was at the fork point, rebuilt from the log.

The board's latest checkpoint is newer than the fork point, so the fork leaves it out
and the board replays its own state events up to there; the parent keeps its board.
"""

from __future__ import annotations

from typing import Any

from akgentic_planning import PLANNING_ACTOR_NAME, PlanningTool

from akgentic.agent import AgentConfig, BaseAgent, StructuredOutput
from akgentic.core import AgentCard
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.events import ToolReturnEvent
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.teams import human_led_team
from akgentic.testing.waiting import wait_until

DONE = structured(StructuredOutput())


def _create(task_id: int, description: str) -> Any:
    return tool_call(
        "update_planning",
        {"update": {"create_tasks": [{"id": task_id, "description": description}]}},
    )


def _board(runtime: Any) -> list[str]:
    (address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == PLANNING_ACTOR_NAME]
    return [task.description for task in ProxyWrapper(address, timeout=30).get_tasks()]


def test_the_fork_has_the_board_of_its_fork_point(
    team_manager: Any, llm_server: ScriptedLLMServer
) -> None:
    planner = AgentCard(
        description="Plans",
        agent_class=BaseAgent,
        config=AgentConfig(
            name="@Planner",
            role="Planner",
            model_cfg=llm_server.model_config(),
            tools=[PlanningTool(vector_store=False)],
        ),
    )
    llm_server.add(_create(1, "draft"), DONE, _create(2, "review"), DONE)
    runtime = team_manager.create_team(human_led_team("planners", "A planner", planner))
    runtime.send("Plan the draft.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    runtime.send("Plan the review.")
    wait_until(lambda: llm_server.served == 4, timeout=30)
    assert runtime.wait_idle(timeout=30)
    assert _board(runtime) == ["draft", "review"]
    team_manager.stop_team(runtime.id)

    first_return = next(
        e.sequence
        for e in team_manager.event_store.load_events(runtime.id)
        if isinstance(e.event, EventMessage) and isinstance(e.event.event, ToolReturnEvent)
    )
    result = team_manager.fork_team(runtime.id, first_return)
    fork = team_manager.resume_team(result.team_id)
    assert _board(fork) == ["draft"]
    team_manager.stop_team(fork.id)
    parent = team_manager.resume_team(runtime.id)
    assert _board(parent) == ["draft", "review"]
