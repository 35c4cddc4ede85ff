"""The scripted server's Responses API (``/v1/responses``), driven by the SDK and pydantic-ai."""

from __future__ import annotations

import asyncio
import json

import openai
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from akgentic.llm.scripted_server import ScriptedLLMServer, structured, text, tool_call, tool_calls


class Verdict(BaseModel):
    ok: bool
    reason: str


def _client(server: ScriptedLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=30)


def _model(server: ScriptedLLMServer) -> OpenAIResponsesModel:
    provider = OpenAIProvider(base_url=server.base_url, api_key="x")
    return OpenAIResponsesModel("gpt-4.1", provider=provider)


def test_a_text_step_comes_back_as_a_responses_message_with_usage(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(text("hello there"))
    reply = _client(llm_server).responses.create(model="m", input="hi")
    assert reply.output_text == "hello there"
    assert reply.usage is not None and reply.usage.total_tokens > 0
    assert llm_server.requests[0]["input"] == "hi"


def test_tool_call_steps_become_function_call_items(llm_server: ScriptedLLMServer) -> None:
    llm_server.add(tool_calls(("a", {"x": 1}), ("b", '{"y": 2}')))
    reply = _client(llm_server).responses.create(model="m", input="go")
    calls = [item for item in reply.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("a", {"x": 1}), ("b", {"y": 2})]
    assert len({c.call_id for c in calls}) == 2


def test_chat_and_responses_requests_share_one_script_and_one_record(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add("from chat", "from responses")
    client = _client(llm_server)
    chat = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
    resp = client.responses.create(model="m", input="b")
    assert (chat.choices[0].message.content, resp.output_text) == ("from chat", "from responses")
    assert "messages" in llm_server.requests[0] and "input" in llm_server.requests[1]
    assert llm_server.served == 2


def test_pydantic_ai_responses_model_runs_a_tool_then_returns_native_structured_output(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(
        tool_call("lookup", {"topic": "tea"}),
        structured(Verdict(ok=True, reason="found it")),
    )
    agent = Agent(_model(llm_server), output_type=NativeOutput(Verdict))
    looked_up: list[str] = []

    @agent.tool_plain
    def lookup(topic: str) -> str:
        looked_up.append(topic)
        return f"{topic} is a drink"

    # Not run_sync: pydantic-ai would create the thread's event loop and never close it.
    result = asyncio.run(agent.run("Is tea known?"))
    assert result.output == Verdict(ok=True, reason="found it")
    assert looked_up == ["tea"]
    second = llm_server.requests[1]
    outputs = [i for i in second["input"] if i.get("type") == "function_call_output"]
    assert outputs and outputs[0]["output"] == "tea is a drink"
    assert second["text"]["format"]["type"] == "json_schema"


def test_pydantic_ai_streams_text_and_tool_calls_through_the_responses_stream(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add(tool_call("shout", {"word": "hey"}), text("streamed answer"))
    agent = Agent(_model(llm_server))

    @agent.tool_plain
    def shout(word: str) -> str:
        return word.upper()

    async def main() -> str:
        async with agent.run_stream("go") as result:
            return await result.get_output()

    assert asyncio.run(main()) == "streamed answer"
    assert [r["stream"] for r in llm_server.requests] == [True, True]
    second = llm_server.requests[1]["input"]
    returns = [i for i in second if i.get("type") == "function_call_output"]
    assert returns[0]["output"] == "HEY"


def test_model_config_with_the_openai_provider_uses_the_responses_api(
    llm_server: ScriptedLLMServer,
) -> None:
    cfg = llm_server.model_config(provider="openai")
    assert (cfg.provider, cfg.base_url) == ("openai", llm_server.base_url)


def test_a_fallback_step_answers_every_request_once_the_script_is_used_up() -> None:
    def echo(body: dict[str, object]) -> str:
        return f"fallback for {body.get('input')}"

    with ScriptedLLMServer(["scripted"], fallback=echo) as server:
        client = _client(server)
        replies = [client.responses.create(model="m", input=q).output_text for q in "abc"]
    assert replies == ["scripted", "fallback for b", "fallback for c"]
    assert server.served == 3 and server.remaining == 0
