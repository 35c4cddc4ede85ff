"""End to end: ReactAgent with the real OpenAI client against the scripted server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelHTTPError

from akgentic.llm import (
    LlmUsageEvent,
    ModelConfig,
    ModelSwitchError,
    ReactAgentConfig,
    RunUsageLimitError,
    RunUsageLimits,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.llm.agent import ReactAgent
from akgentic.llm.budget import RaiseOnLimit
from akgentic.llm.scripted_server import (
    ScriptedLLMServer,
    error,
    structured,
    text,
    tool_call,
    tool_calls,
)


class Weather(BaseModel):
    city: str
    celsius: int


def _agent(server: ScriptedLLMServer, recorder: Any, **cfg: Any) -> ReactAgent[Any]:
    cfg.setdefault("model_cfg", server.model_config())
    return ReactAgent(ReactAgentConfig(**cfg), observer=recorder)


def test_a_tool_calling_run_goes_through_the_real_openai_client(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(tool_call("lookup", {"city": "Oslo"}), text("It is 3 degrees in Oslo."))
    with _agent(llm_server, recorder) as agent:

        @agent.tool
        def lookup(ctx: RunContext[Any], city: str) -> str:
            return f"{city}: 3C"

        assert agent.run_sync("Weather in Oslo?") == "It is 3 degrees in Oslo."

    first, second = llm_server.requests
    assert first["messages"] == [{"role": "user", "content": "Weather in Oslo?"}]
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup"]
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "Oslo: 3C"
    call_event = recorder.of(ToolCallEvent)[0]
    assert json.loads(call_event.arguments) == {"city": "Oslo"}
    assert call_event.tool_call_id == tool_message["tool_call_id"]
    assert recorder.of(ToolReturnEvent)[0].success
    usage = recorder.of(LlmUsageEvent)
    assert len(usage) == 2 and all(u.input_tokens > 0 for u in usage)
    assert usage[0].model_name == "scripted-model"


def test_parallel_tool_calls_report_one_event_per_call_in_order(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(tool_calls(("double", {"n": 1}), ("double", {"n": 2})), text("2 and 4"))
    with _agent(llm_server, recorder) as agent:

        @agent.tool
        def double(ctx: RunContext[Any], n: int) -> int:
            return 2 * n

        agent.run_sync("double 1 and 2")
    assert [json.loads(e.arguments)["n"] for e in recorder.of(ToolCallEvent)] == [1, 2]
    results = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in results] == ["2", "4"]


def test_structured_output_uses_the_json_schema_response_format(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(structured(Weather(city="Rome", celsius=21)))
    with _agent(llm_server, recorder) as agent:
        result = agent.run_sync("weather?", output_type=Weather)
    assert result == Weather(city="Rome", celsius=21)
    response_format = llm_server.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True


def test_system_prompt_is_sent_only_with_the_first_request_of_a_conversation(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(text("one"), text("two"))
    with _agent(llm_server, recorder) as agent:
        agent.system_prompt(lambda: "You are a pirate.")
        agent.run_sync("hi")
        agent.run_sync("again")
    first, second = (r["messages"] for r in llm_server.requests)
    assert first[0] == {"role": "system", "content": "You are a pirate."}
    assert [m["role"] for m in second].count("system") == 1
    assert second[-1] == {"role": "user", "content": "again"}


def test_run_limit_recovery_makes_one_tool_free_request(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(tool_call("noop"), text("final words"))
    limits = RunUsageLimits(run_request_limit=1)
    with _agent(llm_server, recorder, run_usage_limits=limits) as agent:
        agent.tool(noop)
        assert agent.run_sync("go") == "final words"
    assert "tools" in llm_server.requests[0] and "tools" not in llm_server.requests[1]


def test_run_limit_without_recovery_raises_after_the_allowed_requests(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(tool_call("noop"), tool_call("noop"))
    limits = RunUsageLimits(run_request_limit=2)
    cfg = ReactAgentConfig(model_cfg=llm_server.model_config(), run_usage_limits=limits)
    agent: ReactAgent[None] = ReactAgent(cfg, limit_recovery=RaiseOnLimit())
    with agent:
        agent.tool(noop)
        with pytest.raises(RunUsageLimitError):
            agent.run_sync("go")
    assert llm_server.served == 2


def noop(ctx: RunContext[Any]) -> str:
    return "ok"


def test_a_provider_error_surfaces_as_the_sdk_error(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    llm_server.add(error(400, "bad request, scripted"))
    with _agent(llm_server, recorder) as agent, pytest.raises(ModelHTTPError) as info:
        agent.run_sync("hi")
    assert info.value.status_code == 400


def test_switching_models_changes_the_model_sent_from_the_next_run(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    small = llm_server.model_config(model="small")
    big = llm_server.model_config(model="big")
    llm_server.add(text("a"), text("b"))
    with _agent(llm_server, recorder, model_cfg=[small, big]) as agent:
        agent.run_sync("1")
        with pytest.raises(ModelSwitchError, match="openai-chat:big"):
            agent.switch_model("openai-chat:huge")
        assert agent.switch_model("openai-chat:big") == big
        agent.run_sync("2")
        assert agent.active_model().model == "big"
        assert [m.model for m in agent.model_roster()] == ["small", "big"]
    assert [r["model"] for r in llm_server.requests] == ["small", "big"]


def test_a_model_config_can_be_written_for_a_local_openai_compatible_server(
    llm_server: ScriptedLLMServer, recorder: Any
) -> None:
    cfg = ModelConfig.model_validate(
        {"provider": "openai-chat", "model": "qwen2.5", "base_url": llm_server.base_url}
    )
    llm_server.add(text("local reply"))
    with _agent(llm_server, recorder, model_cfg=cfg) as agent:
        assert agent.run_sync("hello") == "local reply"
    assert llm_server.requests[0]["model"] == "qwen2.5"
