"""A team agent handed a message larger than its model's context: one line, nothing resent."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from akgentic.agent import StructuredOutput
from akgentic.core.messages.orchestrator import ErrorMessage, EventMessage
from akgentic.llm.config import HttpClientConfig, RuntimeConfig
from akgentic.llm.context_size import clear_probe_cache
from akgentic.llm.events import TurnFailed
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, with_context
from akgentic.testing.teams import ScriptedTeam
from akgentic.testing.waiting import wait_until

NO_HTTP_RETRIES = RuntimeConfig(http_client_config=HttpClientConfig(max_retries=0))
BIG = "overflowing-payload " * 400  # 8,000 characters, about 2,000 tokens


@pytest.fixture
def team(llm_server: ScriptedLLMServer) -> Iterator[ScriptedTeam]:
    clear_probe_cache()
    with ScriptedTeam(llm_server) as scripted:
        yield scripted
    clear_probe_cache()


def test_an_oversized_message_is_told_in_one_line_and_never_sent(
    team: ScriptedTeam, llm_server: ScriptedLLMServer
) -> None:
    with_context(llm_server, 512)
    llm_server.fallback = structured(StructuredOutput())
    worker = team.spawn("@Worker", [], runtime_cfg=NO_HTTP_RETRIES)
    team.say(worker, BIG)

    def errors() -> list[ErrorMessage]:
        return [m for m in team.recorder.snapshot() if isinstance(m, ErrorMessage)]

    wait_until(errors, timeout=30)
    (failed,) = [
        m.event
        for m in team.recorder.snapshot()
        if isinstance(m, EventMessage) and isinstance(m.event, TurnFailed)
    ]
    assert failed.kind == "context_length"
    assert "\n" not in failed.cause
    for advice in ("context_length", "/compact", "smaller input"):
        assert advice in failed.cause
    assert [e.content for e in errors()] == [failed.cause]
    assert llm_server.requests == []  # never sent to a model that cannot take it

    team.say(worker, "Something small.")
    wait_until(lambda: llm_server.requests, timeout=30)
    body = json.dumps(llm_server.requests[0])
    assert "overflowing-payload" not in body and "Message withheld" in body
