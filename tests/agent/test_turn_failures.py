"""A model that misbehaves fails the agent's turn with one plain line, recorded as TurnFailed.

Every fault mode of the scripted server is played to a real BaseAgent (real OpenAI
client, real actors): the turn ends with one ``TurnFailed`` event whose cause a person
can read, one ``ErrorMessage`` carrying the same line (the traceback stays in its
``traceback`` field, for the log), and the agent carries on.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent, StructuredOutput
from akgentic.core import AgentCard
from akgentic.core.messages.orchestrator import ErrorMessage, EventMessage
from akgentic.llm.config import HttpClientConfig, ModelConfig, RuntimeConfig
from akgentic.llm.events import TurnFailed
from akgentic.llm.failures import CONTEXT_ADVICE
from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    ScriptStep,
    context_length_exceeded,
    malformed_arguments,
    prose,
    server_error,
    structured,
    truncated,
    unknown_tool,
    wrongly_typed_arguments,
)
from akgentic.team import TeamManager
from akgentic.testing.teams import ScriptedTeam, human_led_team
from akgentic.testing.waiting import wait_until

NO_HTTP_RETRIES = RuntimeConfig(http_client_config=HttpClientConfig(max_retries=0))

FAULTS = [
    (server_error(500, "boom"), "http_error", "the model server at {host} answered HTTP 500: boom"),
    (
        server_error(503, "loading model"),
        "http_error",
        "the model server at {host} answered HTTP 503: loading model",
    ),
    (
        unknown_tool("summon_dragon"),
        "unknown_tool",
        "the model called an unknown tool 'summon_dragon' (4 tries)",
    ),
    (
        malformed_arguments("hire_members", '{"roles": ["Dev'),
        "bad_arguments",
        "the model sent malformed JSON arguments to 'hire_members' (4 tries)",
    ),
    (
        wrongly_typed_arguments("hire_members", {"roles": 42}),
        "bad_arguments",
        "the model's arguments to 'hire_members' were invalid (4 tries): roles:",
    ),
    (prose(), "bad_output", "the model answered in prose where JSON was expected (4 tries)"),
    (
        truncated('{"messages": [{"recipient": "@Human", "message": "Hel'),
        "truncated",
        "the model's reply was cut off at max_tokens=64 (1 try)",
    ),
    (
        context_length_exceeded(10119, 2048),
        "context_length",
        "the prompt (10,119 tokens) exceeds the model's context (2,048)",
    ),
    (
        context_length_exceeded(9000, 4096, server="vllm"),
        "context_length",
        "the prompt (9,000 tokens) exceeds the model's context (4,096)",
    ),
]


@pytest.fixture
def team(llm_server: ScriptedLLMServer) -> Iterator[ScriptedTeam]:
    with ScriptedTeam(llm_server) as scripted:
        yield scripted


def _failures(team: ScriptedTeam) -> list[TurnFailed]:
    return [
        m.event
        for m in team.recorder.snapshot()
        if isinstance(m, EventMessage) and isinstance(m.event, TurnFailed)
    ]


def _errors(team: ScriptedTeam) -> list[ErrorMessage]:
    return [m for m in team.recorder.snapshot() if isinstance(m, ErrorMessage)]


@pytest.mark.parametrize(
    ("step", "kind", "says"), FAULTS, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(FAULTS)]
)
def test_each_fault_fails_the_turn_in_one_plain_line_and_the_agent_carries_on(
    team: ScriptedTeam, llm_server: ScriptedLLMServer, step: ScriptStep, kind: str, says: str
) -> None:
    llm_server.fallback = step
    worker = team.spawn(
        "@Worker",
        [],
        runtime_cfg=NO_HTTP_RETRIES,
        model_cfg=llm_server.model_config(max_tokens=64),
    )
    team.say(worker, "Say hello to the human.")
    wait_until(lambda: _errors(team), timeout=30)
    (failed,) = _failures(team)
    assert (failed.kind, "\n" in failed.cause) == (kind, False)
    host = llm_server.url.removeprefix("http://")
    assert failed.cause.startswith(says.format(host=host)), failed.cause
    (error,) = _errors(team)
    assert (error.content_type, error.content) == ("TurnFailedError", failed.cause)
    assert error.traceback is not None and failed.error_type in error.traceback

    llm_server.fallback = structured(StructuredOutput())
    served = len(llm_server.requests)
    team.say(worker, "Try again.")
    wait_until(lambda: len(llm_server.requests) > served, timeout=30)
    assert worker.is_alive()


def test_a_server_that_is_gone_is_named_with_its_address(team: ScriptedTeam) -> None:
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gone = ModelConfig(
        provider="openai-chat", model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k"
    )
    worker = team.spawn("@Worker", [], runtime_cfg=NO_HTTP_RETRIES, model_cfg=gone)
    team.say(worker, "Hello?")
    wait_until(lambda: _errors(team), timeout=30)
    (failed,) = _failures(team)
    assert failed.kind == "connection"
    assert failed.cause.startswith(f"the model server at 127.0.0.1:{port} could not be reached")


def test_the_turn_failed_event_is_stored_with_its_plain_cause(
    team_manager: TeamManager, llm_server: ScriptedLLMServer
) -> None:
    llm_server.fallback = context_length_exceeded(10119, 2048)
    card = AgentCard(
        description="Works",
        agent_class=BaseAgent,
        config=AgentConfig(
            name="@Worker",
            role="Worker",
            model_cfg=llm_server.model_config(api_key=None),
            runtime_cfg=NO_HTTP_RETRIES,
        ),
    )
    runtime = team_manager.create_team(human_led_team("faults", "A faulty model", card))
    runtime.send_to("@Worker", AgentMessage(content="Summarise the novel.", type="request"))
    assert runtime.wait_idle(timeout=30)
    team_manager.stop_team(runtime.id)  # every event written before reading the store
    events = [e.event for e in team_manager.event_store.load_events(runtime.id)]
    stored = [e.event for e in events if isinstance(e, EventMessage)]
    failed = [e for e in stored if isinstance(e, TurnFailed)]
    assert [(f.kind, f.cause) for f in failed] == [
        (
            "context_length",
            "the prompt (10,119 tokens) exceeds the model's context (2,048)" + CONTEXT_ADVICE,
        )
    ]
    errors = [e for e in events if isinstance(e, ErrorMessage)]
    assert [e.content for e in errors] == [failed[0].cause]
