"""End to end: the real OpenAI client against the scripted server, through base_url."""

from __future__ import annotations

import json
from typing import Any

from akgentic.agent import AgentMessage, BaseAgent, Request, StructuredOutput
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


def request_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def test_a_manager_hires_the_scripted_role_and_the_delegated_message_reaches_it(
    team: Any, llm_server: ScriptedLLMServer, helpers: Any
) -> None:
    llm_server.add(
        structured(out(("Developer", "request", "Implement the login page."))),
        structured(out(("@Manager", "response", "Login page implemented."))),
        structured(out(("@Human", "response", "The login page is ready."))),
    )
    model = llm_server.model_config().model_dump()
    team.card("Developer", agent_class=BaseAgent, model_cfg=model)
    manager = team.spawn(team.card("Manager", agent_class=BaseAgent, model_cfg=model))
    team.say(manager, "We need a login page.")
    helpers.wait_for(lambda: team.to_human(), timeout=30)
    assert team.to_human() == ["The login page is ready."]
    delegation = next(
        m
        for m in team.recorder.snapshot()
        if isinstance(m, SentMessage) and m.sender is not None and m.sender.name == "@Manager"
    )
    assert isinstance(delegation.message, AgentMessage)
    assert delegation.message.content == "Implement the login page."
    assert delegation.message.type == "request"
    assert delegation.recipient.role == "Developer"
    assert delegation.recipient.name.startswith("@Developer")
    # The developer's own model request carries the delegated text with its reply guidance.
    assert "You received a request from @Manager." in request_text(llm_server.requests[1])
    assert "Implement the login page." in request_text(llm_server.requests[1])
    assert "You received a response from @Developer" in request_text(llm_server.requests[2])
    assert llm_server.requests[0]["response_format"]["type"] == "json_schema"


def test_stop_during_a_run_interrupts_it(
    team: Any, llm_server: ScriptedLLMServer, helpers: Any
) -> None:
    manager_ref: list[Any] = []

    def stop_while_working(body: dict[str, Any]) -> Any:
        team.say(manager_ref[0], "/stop")
        return tool_call("team_activity", {})

    llm_server.add(stop_while_working)
    model = llm_server.model_config().model_dump()
    manager = team.spawn(team.card("Manager", agent_class=BaseAgent, model_cfg=model))
    manager_ref.append(manager)
    team.say(manager, "Do something long.")
    helpers.wait_for(lambda: team.to_human(), timeout=30)
    assert team.to_human() == ["@Manager stopped its run as asked."]
    assert llm_server.served == 1 and len(llm_server.requests) == 1


def test_a_usage_limit_breach_reaches_the_human_proxy_as_a_notification(
    team: Any, llm_server: ScriptedLLMServer, helpers: Any
) -> None:
    llm_server.add(structured(out()))
    model = llm_server.model_config().model_dump()
    manager = team.spawn(
        team.card(
            "Manager",
            agent_class=BaseAgent,
            model_cfg=model,
            agent_usage_limits={"agent_request_limit": 1},
        )
    )
    team.say(manager, "First.")
    team.say(manager, "Second.")
    helpers.wait_for(lambda: team.to_human(), timeout=30)
    [notice] = team.recorder.sent(to="@Human")
    assert notice.type == "notification"
    assert "usage budget" in notice.content
    assert len(llm_server.requests) == 1
