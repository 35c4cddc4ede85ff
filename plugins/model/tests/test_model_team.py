"""ModelTool in real teams: a switch survives a resume; another agent cannot switch a model."""

from __future__ import annotations

from typing import Any

import pytest
from akgentic_model import ModelTool, SwitchModel

from akgentic.agent import AgentConfig, BaseAgent, Request, StructuredOutput
from akgentic.core import AgentCard
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.teams import ScriptedTeam, human_led_team
from akgentic.testing.waiting import wait_until
from akgentic.tool import COMMAND

team_api = pytest.importorskip("akgentic.team")

FAST, DEEP = "openai-chat:fast", "openai-chat:deep"


def roster(server: ScriptedLLMServer) -> list[Any]:
    return [server.model_config(model="fast"), server.model_config(model="deep")]


def team_card(server: ScriptedLLMServer, models: list[Any]) -> Any:
    writer = AgentCard(
        description="Writes",
        agent_class=BaseAgent,
        config=AgentConfig(name="@Writer", role="Writer", model_cfg=models, tools=[ModelTool()]),
    )
    return human_led_team("switchers", "A writer that may switch models", writer)


def test_a_switched_model_answers_the_first_turn_after_a_resume(
    team_manager: Any, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add(
        tool_call("switch_model", {"model": DEEP}),
        structured(StructuredOutput()),
        structured(StructuredOutput()),
    )
    runtime = team_manager.create_team(team_card(llm_server, roster(llm_server)))
    runtime.send("Switch to the deep model.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    # The switch applies from the next run: this run finished on its model.
    assert [body["model"] for body in llm_server.requests] == ["fast", "fast"]
    team_manager.stop_team(runtime.id)

    resumed = team_manager.resume_team(runtime.id)
    resumed.send("Go on.")
    wait_until(lambda: llm_server.served == 3, timeout=30)
    assert resumed.wait_idle(timeout=30)
    assert llm_server.requests[2]["model"] == "deep"


def test_a_stored_model_no_longer_in_the_roster_falls_back_once_with_a_warning(
    llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.fallback = structured(StructuredOutput())
    with ScriptedTeam(llm_server) as team:
        member = team.spawn("@Writer", [ModelTool()], model_cfg=roster(llm_server))
        agent = team.system.proxy_ask(member, BaseAgent, timeout=10)
        # What a resume restores when the stored key has since left the roster.
        agent.state.tool_state.active_model = "openai-chat:gone"
        team.say(member, "First.")
        team.say(member, "Second.")
        wait_until(lambda: llm_server.served == 2, timeout=30)
        wait_until(lambda: agent.list_model_rows()[0].active, timeout=30)
    assert [body["model"] for body in llm_server.requests] == ["fast", "fast"]
    warnings = [r for r in caplog.records if "stored model 'openai-chat:gone'" in r.getMessage()]
    assert len(warnings) == 1


def test_an_agent_sending_switch_model_to_another_agent_does_not_switch_it(
    llm_server: ScriptedLLMServer,
) -> None:
    order = StructuredOutput(
        messages=[
            Request(recipient="@Target", message_type="request", message=f"/switch_model {DEEP}")
        ]
    )
    llm_server.add(structured(order))
    llm_server.fallback = structured(StructuredOutput())
    with ScriptedTeam(llm_server) as team:
        target = team.spawn(
            "@Target",
            [ModelTool(switch_model=SwitchModel(expose={COMMAND}))],
            model_cfg=roster(llm_server),
        )
        boss = team.spawn("@Boss", [])
        team.say(boss, "Make @Target use the deep model.")
        wait_until(lambda: team.sent_to("@Target"), timeout=30)
        # Either the line was answered as a command (a notification back to @Boss) or
        # @Target thought about it in a model turn: wait for whichever happens.
        wait_until(lambda: team.sent_to("@Boss")[1:] or llm_server.served >= 2, timeout=30)
        target_agent = team.system.proxy_ask(target, BaseAgent, timeout=10)
        assert target_agent.state.tool_state.active_model is None
        assert target_agent.list_model_rows()[0].active  # still the declared (first) model
