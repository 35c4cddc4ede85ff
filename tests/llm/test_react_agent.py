"""ReactAgent on pydantic-ai's FunctionModel: run path, events, loop, limits, restore."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RequestUsage

from akgentic.llm import (
    AgentUsageLimitError,
    AgentUsageLimits,
    ReactAgentConfig,
    RunUsageLimitError,
    RunUsageLimits,
    UsageLimitError,
)
from akgentic.llm.budget import DEFAULT_CONCLUSION_REASON, LimitRecovery, RaiseOnLimit
from akgentic.llm.events import (
    LlmContextClearedEvent,
    LlmMessageEvent,
    LlmSystemPromptEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
)


def call(name: str, **args: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args)])


def always_call_tool(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return call("ping")


def ping(ctx: RunContext[Any]) -> str:
    return "pong"


def add_ping(agent: Any) -> None:
    agent.tool(ping)


def test_run_sync_returns_the_model_output_and_keeps_the_history(make_agent: Any) -> None:
    agent, _ = make_agent(["hello there"])
    assert agent.run_sync("hi") == "hello there"
    kinds = [type(m) for m in agent.context.messages]
    assert kinds == [ModelRequest, ModelResponse]


def test_tool_run_reports_events_per_message_in_documented_order(
    make_agent: Any, recorder: Any
) -> None:
    agent, _ = make_agent([call("ping"), "done"])
    add_ping(agent)
    agent.run_sync("go")
    assert recorder.names() == [
        "LlmMessageEvent",  # user request
        "LlmMessageEvent",  # response with the tool call
        "ToolCallEvent",
        "LlmUsageEvent",
        "LlmMessageEvent",  # tool return
        "ToolReturnEvent",
        "LlmMessageEvent",  # final text
        "LlmUsageEvent",
    ]
    call_event = recorder.of(ToolCallEvent)[0]
    return_event = recorder.of(ToolReturnEvent)[0]
    assert call_event.tool_call_id == return_event.tool_call_id
    assert return_event.success
    run_ids = {e.run_id for e in recorder.of(LlmUsageEvent)} | {call_event.run_id}
    assert len(run_ids) == 1


def test_each_run_gets_its_own_run_id(make_agent: Any, recorder: Any) -> None:
    agent, _ = make_agent(["a", "b"])
    agent.run_sync("one")
    agent.run_sync("two")
    assert len({e.run_id for e in recorder.of(LlmUsageEvent)}) == 2


def test_system_prompt_is_only_added_to_an_empty_history(make_agent: Any, recorder: Any) -> None:
    agent, _ = make_agent(["a", "b", "c"])
    calls = []

    def backstory() -> str:
        calls.append(1)
        return "You are terse."

    agent.system_prompt(backstory)

    agent.run_sync("one")
    agent.run_sync("two")
    history = agent.context.messages
    with_system = [m for m in history if any(isinstance(p, SystemPromptPart) for p in m.parts)]
    assert len(with_system) == 1 and with_system[0] is history[0]
    assert len(recorder.of(LlmSystemPromptEvent)) == 1
    agent.clear_context()
    agent.run_sync("three")
    assert isinstance(agent.context.messages[0].parts[0], SystemPromptPart)


def test_system_prompt_functions_receive_the_run_deps(make_agent: Any) -> None:
    agent, fn = make_agent(["ok"])

    def who(ctx: RunContext[str]) -> str:
        return f"You serve {ctx.deps}."

    agent.system_prompt(who)

    agent.run_sync("hi", deps="Ada")
    first = fn.seen[0][0]
    assert first.parts[0].content == "You serve Ada."


def test_notes_added_before_the_first_run_are_folded_into_its_prompt(make_agent: Any) -> None:
    agent, fn = make_agent(["ok"])
    agent.context.append_user_prompt("context: the sky is green")
    agent.run_sync("what colour is the sky?")
    prompts = [p.content for p in fn.seen[0][0].parts if isinstance(p, UserPromptPart)]
    assert prompts == ["context: the sky is green\n\nwhat colour is the sky?"]


def test_list_prompts_pass_through_unchanged(make_agent: Any) -> None:
    agent, fn = make_agent(["ok"])
    agent.run_sync(["part one", "part two"])
    prompt = fn.seen[0][-1].parts[-1]
    assert isinstance(prompt, UserPromptPart)
    assert prompt.content == ["part one", "part two"]


def test_each_agent_owns_its_event_loop_and_runs_on_it(make_agent: Any) -> None:
    seen_loops: list[asyncio.AbstractEventLoop] = []

    async def where(ctx: RunContext[Any]) -> str:
        seen_loops.append(asyncio.get_running_loop())
        return "here"

    a, _ = make_agent([call("where"), "x", call("where"), "y"])
    b, _ = make_agent([call("where"), "z"])
    a.tool(where)
    b.tool(where)
    a.run_sync("1")
    b.run_sync("1")
    a.run_sync("2")
    assert a.loop is not b.loop
    assert seen_loops == [a.loop, b.loop, a.loop]


def test_an_agent_built_in_a_thread_runs_there(make_agent: Any) -> None:
    out: dict[str, Any] = {}

    def actor_thread() -> None:
        agent, _ = make_agent(["from thread"])
        out["result"] = agent.run_sync("hi")
        out["loop_is_current"] = asyncio.get_event_loop() is agent.loop

    t = threading.Thread(target=actor_thread)
    t.start()
    t.join(timeout=30)
    assert out == {"result": "from thread", "loop_is_current": True}


def test_a_closed_agent_refuses_to_run_and_close_is_idempotent(make_agent: Any) -> None:
    agent, _ = make_agent(["x"])
    agent.close()
    agent.close()
    assert agent.loop.is_closed()
    with pytest.raises(RuntimeError, match="closed"):
        agent.run_sync("hi")


def test_run_limit_breach_is_concluded_without_tools_by_default(make_agent: Any) -> None:
    def conclude(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert info.function_tools == []
        return ModelResponse(parts=[TextPart("best effort answer")])

    cfg = ReactAgentConfig(run_usage_limits=RunUsageLimits(run_request_limit=2))
    agent, fn = make_agent([always_call_tool, always_call_tool, conclude], cfg)
    add_ping(agent)
    assert agent.run_sync("loop forever") == "best effort answer"
    last_prompt = fn.seen[-1][-1].parts[-1]
    assert isinstance(last_prompt, UserPromptPart)
    assert last_prompt.content == DEFAULT_CONCLUSION_REASON
    assert agent.usage_totals()[0] == 2  # the rescued turn costs two lifetime runs


def test_run_limit_breach_raises_when_recovery_declines(make_agent: Any) -> None:
    cfg = ReactAgentConfig(run_usage_limits=RunUsageLimits(run_request_limit=1))
    agent, _ = make_agent([always_call_tool], cfg, limit_recovery=RaiseOnLimit())
    add_ping(agent)
    with pytest.raises(RunUsageLimitError) as info:
        agent.run_sync("go")
    assert isinstance(info.value.__cause__, UsageLimitExceeded)
    assert isinstance(info.value, UsageLimitError)


def test_a_blank_conclusion_raises_the_original_breach(make_agent: Any) -> None:
    cfg = ReactAgentConfig(run_usage_limits=RunUsageLimits(run_request_limit=1))
    agent, _ = make_agent([always_call_tool, "   "], cfg)
    add_ping(agent)
    with pytest.raises(RunUsageLimitError, match="request_limit"):
        agent.run_sync("go")


def test_custom_recovery_chooses_the_conclusion_prompt(make_agent: Any) -> None:
    class Polite(LimitRecovery):
        def decide(self, error: Exception) -> str | None:
            return "wrap it up"

    cfg = ReactAgentConfig(run_usage_limits=RunUsageLimits(run_request_limit=1))
    agent, fn = make_agent([always_call_tool, "wrapped"], cfg, limit_recovery=Polite())
    add_ping(agent)
    assert agent.run_sync("go") == "wrapped"
    assert fn.seen[-1][-1].parts[-1].content == "wrap it up"


def test_agent_request_limit_is_checked_before_the_run(make_agent: Any) -> None:
    cfg = ReactAgentConfig(agent_usage_limits=AgentUsageLimits(agent_request_limit=2))
    agent, fn = make_agent(["a", "b", "c"], cfg)
    agent.run_sync("1")
    agent.run_sync("2")
    with pytest.raises(AgentUsageLimitError, match="agent_request_limit of 2"):
        agent.run_sync("3")
    assert len(fn.seen) == 2


def test_a_failing_run_still_counts_against_the_agent_tier(make_agent: Any) -> None:
    def boom(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("provider down")

    cfg = ReactAgentConfig(agent_usage_limits=AgentUsageLimits(agent_request_limit=1))
    agent, _ = make_agent([boom, "never"], cfg)
    with pytest.raises(RuntimeError, match="provider down"):
        agent.run_sync("1")
    with pytest.raises(AgentUsageLimitError):
        agent.run_sync("2")


def test_agent_token_limit_lets_the_crossing_run_finish_and_refuses_the_next(
    make_agent: Any,
) -> None:
    usage = RequestUsage(input_tokens=80, output_tokens=40)
    big = ModelResponse(parts=[TextPart("long")], usage=usage)
    cfg = ReactAgentConfig(agent_usage_limits=AgentUsageLimits(total_tokens_limit=100))
    agent, _ = make_agent([big, "never"], cfg)
    assert agent.run_sync("1") == "long"
    with pytest.raises(AgentUsageLimitError, match="total_tokens"):
        agent.run_sync("2")


def test_restore_rebuilds_history_and_lifetime_counters_silently(
    make_agent: Any, recorder: Any
) -> None:
    cfg = ReactAgentConfig(agent_usage_limits=AgentUsageLimits(agent_request_limit=3))
    original, _ = make_agent([call("ping"), "done", "again"], cfg)
    add_ping(original)
    original.run_sync("one")
    original.run_sync("two")
    persisted = list(recorder.events)

    @dataclass
    class EventMessage:  # what the core wraps LLM events in
        event: object

    fresh, _ = make_agent(["third"], cfg, observer=None)
    fresh.restore_context([EventMessage(e) for e in persisted] + [EventMessage("noise")])
    assert fresh.context.messages == original.context.messages
    assert fresh.usage_totals() == original.usage_totals()
    assert fresh.run_sync("three") == "third"
    with pytest.raises(AgentUsageLimitError):
        fresh.run_sync("four")
    fresh.restore_context([EventMessage(e) for e in persisted])
    assert fresh.usage_totals()[0] == 2  # seeding assigns, it does not add


def test_restore_applies_clear_events_in_order(make_agent: Any, recorder: Any) -> None:
    agent, _ = make_agent(["a", "b"])
    agent.run_sync("1")
    agent.clear_context()
    agent.run_sync("2")
    assert any(isinstance(e, LlmContextClearedEvent) for e in recorder.events)
    fresh, _ = make_agent([], observer=None)
    fresh.restore_context(recorder.events)
    assert fresh.context.messages == agent.context.messages
    assert [p.content for p in fresh.context.messages[0].parts] == ["2"]


def test_restore_seeds_the_system_prompt_hash(make_agent: Any, recorder: Any) -> None:
    agent, _ = make_agent(["a"])
    agent.system_prompt(lambda: "stable")
    agent.run_sync("1")
    fresh_events: list[object] = []

    class Obs:
        def notify_event(self, event: object) -> None:
            fresh_events.append(event)

    fresh, _ = make_agent(["b"], observer=Obs())
    fresh.system_prompt(lambda: "stable")
    fresh.restore_context(recorder.events)
    fresh.run_sync("2")
    assert not any(isinstance(e, LlmSystemPromptEvent) for e in fresh_events)


def test_a_tool_call_left_open_by_a_failed_run_is_closed_on_the_next_run(
    make_agent: Any, recorder: Any
) -> None:
    agent, fn = make_agent([call("explode"), "recovered"])

    def explode(ctx: RunContext[Any]) -> str:
        raise KeyError("kaboom")

    agent.tool(explode)

    with pytest.raises(KeyError):
        agent.run_sync("first")
    assert agent.run_sync("second") == "recovered"
    returns = recorder.of(ToolReturnEvent)
    assert len(returns) == 1 and not returns[0].success
    messages = [e.message for e in recorder.of(LlmMessageEvent)]
    aborted = messages[-3].parts[0]
    assert "aborted" in str(aborted.content) and "kaboom" in str(aborted.content)
    assert fn.seen[-1][-1].parts[-1].content == "second"
