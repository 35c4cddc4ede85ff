"""End to end: a reminder scheduled by the model survives a stop and fires once after resume."""

from __future__ import annotations

import json
from typing import Any

import pytest
from akgentic_notification import NotificationTool, models
from akgentic_notification.actor import NotificationActor

from akgentic.agent import AgentConfig, BaseAgent, StructuredOutput
from akgentic.core import AgentCard
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.teams import human_led_team
from akgentic.testing.waiting import wait_until

team_api = pytest.importorskip("akgentic.team")


def _card(server: ScriptedLLMServer) -> Any:
    writer = AgentCard(
        description="Writes, and reminds itself",
        agent_class=BaseAgent,
        config=AgentConfig(
            name="@Writer",
            role="Writer",
            model_cfg=server.model_config(),
            tools=[NotificationTool()],
        ),
    )
    return human_led_team("reminders", "A writer with reminders", writer)


def _notification_actor(runtime: Any) -> Any:
    (address,) = [
        m for m in runtime.orchestrator_proxy.get_team() if m.name == models.NOTIFICATION_ACTOR_NAME
    ]
    return ProxyWrapper(address, timeout=10)


def test_a_reminder_due_while_the_team_is_stopped_is_delivered_once_after_resume(
    team_manager: Any, llm_server: ScriptedLLMServer, clock: Any
) -> None:
    llm_server.add(
        tool_call("register_notification", {"content": "ping the reviewers", "delay_seconds": 60}),
        structured(StructuredOutput()),
    )
    llm_server.fallback = structured(StructuredOutput())
    runtime = team_manager.create_team(_card(llm_server))
    runtime.send("Remind me in a minute to ping the reviewers.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    scheduled = _notification_actor(runtime).list_for(None)
    assert [entry.content for entry in scheduled] == ["ping the reviewers"]
    fire_at = scheduled[0].fire_at
    team_manager.stop_team(runtime.id)

    clock.advance(120)
    resumed = team_manager.resume_team(runtime.id)
    wait_until(lambda: llm_server.served == 3, timeout=30)
    assert resumed.wait_idle(timeout=30)

    delivered = llm_server.requests[2]
    text = json.dumps(delivered["messages"])
    assert "ping the reviewers" in text
    # The agent's history was back before the reminder ran its turn.
    assert text.count("Remind me in a minute to ping the reviewers.") == 1
    actor = _notification_actor(resumed)
    state = actor.state
    assert state.pending == {} and state.next_id == 2
    actor.deliver_due()  # another scan finds nothing left to send
    assert llm_server.served == 3
    assert fire_at < clock.current
    assert NotificationActor.__module__ == "akgentic_notification.actor"  # stored class path
