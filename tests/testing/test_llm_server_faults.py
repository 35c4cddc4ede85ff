"""The scripted server's fault modes, as the real OpenAI SDK receives them."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    context_length_exceeded,
    malformed_arguments,
    prose,
    server_error,
    truncated,
    unknown_tool,
    wrongly_typed_arguments,
)

ASK = [{"role": "user", "content": "hi"}]


def _client(server: ScriptedLLMServer) -> Any:
    # Any: the SDK's overloads and tool-call unions are not what these tests check.
    return openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=30)


def test_a_server_error_is_a_5xx_and_only_a_5xx(llm_server: ScriptedLLMServer) -> None:
    llm_server.add(server_error(502, "upstream died"))
    with pytest.raises(openai.InternalServerError) as caught:
        _client(llm_server).chat.completions.create(model="m", messages=ASK)
    assert caught.value.status_code == 502
    with pytest.raises(ValueError, match="5xx"):
        server_error(404)


@pytest.mark.parametrize(
    ("server", "fields"),
    [
        (
            "llama.cpp",
            {"type": "exceed_context_size_error", "n_prompt_tokens": 10119, "n_ctx": 2048},
        ),
        ("vllm", {"type": "BadRequestError", "code": 400}),
        ("openai", {"code": "context_length_exceeded"}),
    ],
)
def test_context_length_exceeded_is_the_400_each_server_sends(
    llm_server: ScriptedLLMServer, server: str, fields: dict[str, object]
) -> None:
    llm_server.add(context_length_exceeded(10119, 2048, server=server))
    with pytest.raises(openai.BadRequestError) as caught:
        _client(llm_server).chat.completions.create(model="m", messages=ASK)
    body = caught.value.body
    assert isinstance(body, dict)
    assert fields.items() <= body.items()
    if server != "llama.cpp":
        assert "maximum context length is 2048 tokens" in body["message"]
        assert "10119 tokens" in body["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_truncated_replies_end_with_finish_reason_length(
    llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.add(truncated("0123456789", keep=4), truncated('{"a": 1}', tool="t", keep=5))
    client = _client(llm_server)
    for expected in ("0123", None):
        if stream:
            chunks = list(client.chat.completions.create(model="m", messages=ASK, stream=True))
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
            content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert (finish, content or None) == ("length", expected)
        else:
            reply = client.chat.completions.create(model="m", messages=ASK)
            choice = reply.choices[0]
            assert (choice.finish_reason, choice.message.content) == ("length", expected)
            if expected is None:
                assert choice.message.tool_calls is not None
                assert choice.message.tool_calls[0].function.arguments == '{"a":'


def test_bad_tool_calls_and_prose_are_what_they_say(llm_server: ScriptedLLMServer) -> None:
    llm_server.add(
        unknown_tool("ghost", {"x": 1}),
        malformed_arguments("write", '{"text": "open'),
        wrongly_typed_arguments("write", {"text": ["not", "a", "string"]}),
        prose("Happy to help!"),
    )
    client = _client(llm_server)
    calls = [
        client.chat.completions.create(model="m", messages=ASK).choices[0].message for _ in range(4)
    ]
    assert calls[0].tool_calls is not None and calls[0].tool_calls[0].function.name == "ghost"
    assert calls[1].tool_calls is not None
    with pytest.raises(json.JSONDecodeError):
        json.loads(calls[1].tool_calls[0].function.arguments)
    assert calls[2].tool_calls is not None
    assert json.loads(calls[2].tool_calls[0].function.arguments) == {"text": ["not", "a", "string"]}
    assert (calls[3].content, calls[3].tool_calls) == ("Happy to help!", None)
