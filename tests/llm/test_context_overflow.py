"""The context window: read from the server, compacted before it overflows, never resent oversized.

A real ReactAgent (the pydantic-ai OpenAI client) talks to the scripted server, which
tells its context like llama.cpp or vLLM and refuses a larger prompt as they do.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator

import pytest
from pydantic_ai.exceptions import ModelHTTPError

from akgentic.llm.agent import ReactAgent
from akgentic.llm.config import (
    CompactionConfig,
    HttpClientConfig,
    ReactAgentConfig,
    RuntimeConfig,
)
from akgentic.llm.context_size import (
    _from_ollama,
    clear_probe_cache,
    context_length_of,
    probe_context_length,
)
from akgentic.llm.errors import ContextOverflowError
from akgentic.llm.events import LlmContextCompactedEvent, LlmMessageWithheldEvent
from akgentic.llm.failures import describe_failure
from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    context_length_exceeded,
    with_context,
)

NO_RETRIES = RuntimeConfig(http_client_config=HttpClientConfig(max_retries=0))
BIG = "overflowing-payload " * 400  # 8,000 characters, about 2,000 tokens


class Events:
    """Collects every LLM event of an agent."""

    def __init__(self) -> None:
        self.seen: list[object] = []

    def notify_event(self, event: object) -> None:
        self.seen.append(event)


@pytest.fixture(autouse=True)
def _fresh_probe_cache() -> Iterator[None]:
    clear_probe_cache()
    yield
    clear_probe_cache()


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(fallback="ok") as scripted:
        yield scripted


def _agent(server: ScriptedLLMServer, events: Events, **fields: object) -> ReactAgent[None]:
    config = ReactAgentConfig(model_cfg=server.model_config(), runtime_cfg=NO_RETRIES, **fields)
    return ReactAgent(config, observer=events)


def _bodies(server: ScriptedLLMServer) -> list[str]:
    return [json.dumps(body) for body in server.requests]


# ------------------------------------------------------------------ probing


def test_the_context_size_is_read_from_llama_cpp_props(server: ScriptedLLMServer) -> None:
    with_context(server, 4096)
    assert asyncio.run(probe_context_length(server.base_url, server.model)) == 4096


def test_the_context_size_is_read_from_vllm_models(server: ScriptedLLMServer) -> None:
    with_context(server, 8192, flavour="vllm")
    assert asyncio.run(probe_context_length(server.base_url, server.model)) == 8192


def test_the_context_size_is_read_from_ollama_show(server: ScriptedLLMServer) -> None:
    with_context(server, 16384, flavour="ollama")
    assert asyncio.run(probe_context_length(server.base_url, server.model)) == 16384


def test_the_card_overrides_the_server_and_a_silent_server_is_unknown(
    server: ScriptedLLMServer,
) -> None:
    assert asyncio.run(context_length_of(server.model_config())) is None
    with_context(server, 4096)
    clear_probe_cache()
    assert asyncio.run(context_length_of(server.model_config(context_length=1000))) == 1000
    assert asyncio.run(context_length_of(server.model_config())) == 4096


def test_an_unreachable_server_is_unknown_and_cached() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    url = f"http://127.0.0.1:{port}/v1"
    assert asyncio.run(probe_context_length(url, "m", timeout=1.0)) is None
    with ScriptedLLMServer(port=port) as revived:
        with_context(revived, 2048)
        assert asyncio.run(probe_context_length(url, "m")) is None  # cached: asked once


def test_ollama_show_answers_are_read() -> None:
    info = {"model_info": {"gemma3.context_length": 32768, "general.architecture": "gemma3"}}
    assert _from_ollama(info) == 32768
    assert _from_ollama({**info, "parameters": "stop <eos>\nnum_ctx 8192"}) == 8192
    assert _from_ollama({"model_info": {"general.architecture": "x"}}) is None


# ------------------------------------------------------------ oversized input


def test_a_refused_oversized_message_fails_once_and_is_never_resent(
    server: ScriptedLLMServer,
) -> None:
    server.add(context_length_exceeded(2090, 512))
    events = Events()
    with _agent(server, events) as agent:
        with pytest.raises(ModelHTTPError) as failed:
            agent.run_sync(BIG)
        kind, cause = describe_failure(failed.value)
        assert kind == "context_length"
        assert "/compact" in cause and "\n" not in cause
        assert agent.run_sync("Something small.") == "ok"
    first, second = _bodies(server)
    assert "overflowing-payload" in first
    assert "overflowing-payload" not in second
    assert "Message withheld" in second and "8,000 characters" in second
    assert [type(e) for e in events.seen if isinstance(e, LlmMessageWithheldEvent)] == [
        LlmMessageWithheldEvent
    ]


def test_a_message_larger_than_a_known_context_is_not_sent(server: ScriptedLLMServer) -> None:
    with_context(server, 512)
    events = Events()
    with _agent(server, events) as agent:
        with pytest.raises(ContextOverflowError) as failed:
            agent.run_sync(BIG)
        assert describe_failure(failed.value)[0] == "context_length"
        assert server.requests == []
        assert agent.run_sync("Something small.") == "ok"
    (body,) = _bodies(server)
    assert "overflowing-payload" not in body
    assert "Message withheld" in body


def test_the_withheld_message_stays_out_after_a_restore(server: ScriptedLLMServer) -> None:
    server.add(context_length_exceeded(2090, 512))
    events = Events()
    with _agent(server, events) as agent, pytest.raises(ModelHTTPError):
        agent.run_sync(BIG)
    with _agent(server, Events()) as restored:
        restored.restore_context(events.seen)
        assert restored.run_sync("Go on.") == "ok"
    assert "overflowing-payload" not in _bodies(server)[-1]


# --------------------------------------------------------------- compaction


def test_a_growing_history_is_compacted_before_the_request_would_overflow(
    server: ScriptedLLMServer,
) -> None:
    with_context(server, 800)
    events = Events()
    compaction = CompactionConfig(strategy="sliding_window", keep_recent_messages=2)
    turns = [f"turn {i}: " + "filler words " * 46 for i in range(8)]  # ~600 characters each
    with _agent(server, events, compaction_cfg=compaction) as agent:
        for prompt in turns:
            assert agent.run_sync(prompt) == "ok"
    bodies = _bodies(server)
    assert server.served == len(bodies) == len(turns)  # the server never refused one
    assert any(isinstance(e, LlmContextCompactedEvent) for e in events.seen)
    assert "turn 0:" not in bodies[-1] and "turn 7:" in bodies[-1]
    # Without compaction the last request would have carried every turn.
    assert sum(len(t) for t in turns) // 4 > 800
