"""The scripted OpenAI-compatible server, driven by the real OpenAI SDK and pydantic-ai."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    ScriptStep,
    delayed,
    hang,
    structured,
    text,
    tool_call,
    tool_calls,
)
from akgentic.testing.waiting import poll_until


def _client(server: ScriptedLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=30)


def test_text_steps_are_played_in_order_and_requests_recorded(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(text("first"), "second")
    client = _client(llm_server)
    replies = [
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"q{i}"}])
        for i in range(2)
    ]
    assert [r.choices[0].message.content for r in replies] == ["first", "second"]
    assert [r["messages"][0]["content"] for r in llm_server.requests] == ["q0", "q1"]
    assert llm_server.remaining == 0 and llm_server.served == 2
    assert replies[0].usage is not None and replies[0].usage.total_tokens > 0


def test_tool_call_steps_carry_json_arguments(llm_server: ScriptedLLMServer) -> None:
    llm_server.add(tool_calls(("a", {"x": 1}), ("b", '{"y": 2}')))
    reply = _client(llm_server).chat.completions.create(model="m", messages=[])
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
        ("a", {"x": 1}),
        ("b", {"y": 2}),
    ]
    assert len({c.id for c in calls}) == 2


def test_structured_steps_reply_with_json_text(llm_server: ScriptedLLMServer) -> None:
    llm_server.add(structured({"ok": True}))
    reply = _client(llm_server).chat.completions.create(model="m", messages=[])
    assert json.loads(reply.choices[0].message.content or "") == {"ok": True}


def test_a_callable_step_sees_the_request_body(llm_server: ScriptedLLMServer) -> None:
    def echo(body: dict[str, Any]) -> str:
        return "echo: " + str(body["messages"][-1]["content"])

    llm_server.add(echo)
    reply = _client(llm_server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "ping"}]
    )
    assert reply.choices[0].message.content == "echo: ping"


def test_an_exhausted_script_answers_with_a_clear_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.add("only one")
    client = _client(llm_server)
    client.chat.completions.create(model="m", messages=[])
    with pytest.raises(openai.BadRequestError, match="script is exhausted"):
        client.chat.completions.create(model="m", messages=[])
    assert len(llm_server.requests) == 2


def test_streaming_replies_assemble_text_tool_calls_and_usage(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(text("streamed words"), tool_call("f", {"k": "v"}))
    client = _client(llm_server)
    chunks = list(
        client.chat.completions.create(
            model="m", messages=[], stream=True, stream_options={"include_usage": True}
        )
    )
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "streamed words"
    assert chunks[-1].usage is not None
    tool_chunks = list(client.chat.completions.create(model="m", messages=[], stream=True))
    deltas = [d for c in tool_chunks if c.choices for d in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].function is not None and deltas[0].function.name == "f"
    assert tool_chunks[-1].choices[0].finish_reason == "tool_calls"


def test_pydantic_ai_streaming_run_works_against_the_server(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(text("hello from a stream"))
    provider = OpenAIProvider(base_url=llm_server.base_url, api_key="x")
    agent = Agent(OpenAIChatModel("m", provider=provider))

    async def main() -> str:
        async with agent.run_stream("hi") as result:
            return await result.get_output()

    assert asyncio.run(main()) == "hello from a stream"
    assert llm_server.requests[0]["stream"] is True


def test_other_paths_get_404_and_models_are_listed(llm_server: ScriptedLLMServer) -> None:
    with urllib.request.urlopen(llm_server.base_url + "/models", timeout=10) as resp:
        assert json.load(resp)["data"][0]["id"] == "scripted-model"
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(llm_server.url + "/v1/embeddings", data=b"{}", timeout=10)
    with info.value:  # the error holds the response and its connection: close them
        assert info.value.code == 404


def test_error_steps_return_the_status(llm_server: ScriptedLLMServer) -> None:
    llm_server.add(ScriptStep(status=422, error_message="nope"))
    with pytest.raises(openai.UnprocessableEntityError, match="nope"):
        _client(llm_server).chat.completions.create(model="m", messages=[])


def test_the_server_binds_loopback_and_releases_its_port_on_exit() -> None:
    with ScriptedLLMServer() as server:
        assert server.url.startswith("http://127.0.0.1:")
        port = int(server.url.rsplit(":", 1)[1])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # free again
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.url


def test_model_config_points_openai_chat_at_the_server(llm_server: ScriptedLLMServer) -> None:
    cfg = llm_server.model_config(temperature=0.0)
    assert (cfg.provider, cfg.base_url) == ("openai-chat", llm_server.base_url)
    assert cfg.temperature == 0.0


# ------------------------------------------------------- slow and hung steps


def test_a_delayed_step_is_answered_after_its_delay() -> None:
    answered = threading.Event()
    with ScriptedLLMServer([delayed(0.3, "late")]) as server:
        client = _client(server)

        def ask() -> None:
            reply = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
            if reply.choices[0].message.content == "late":
                answered.set()

        worker = threading.Thread(target=ask, daemon=True)
        worker.start()
        assert poll_until(lambda: len(server.requests) == 1, timeout=10)
        assert not answered.is_set()  # received, not yet answered
        assert answered.wait(timeout=30)
        worker.join(timeout=10)


def test_a_hung_step_is_never_answered_until_the_server_stops() -> None:
    failures: list[BaseException] = []
    server = ScriptedLLMServer([hang()]).start()
    client = _client(server)

    def ask() -> None:
        try:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        except openai.APIConnectionError as exc:
            failures.append(exc)

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    assert poll_until(lambda: len(server.requests) == 1, timeout=10)
    worker.join(timeout=0.5)
    assert worker.is_alive(), "a hung request must not be answered"
    server.stop()
    worker.join(timeout=30)
    assert not worker.is_alive() and failures, "the connection must drop when the server stops"
