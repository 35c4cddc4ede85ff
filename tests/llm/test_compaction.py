"""Compaction: manual and automatic folds that keep tool calls with their returns."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RequestUsage

from akgentic.llm import CompactionConfig, ModelConfig, ReactAgentConfig
from akgentic.llm.compaction import (
    COMPACTION_STRATEGIES,
    NoOpCompaction,
    SlidingWindowCompaction,
    create_compaction,
    fold_point,
)
from akgentic.llm.context import SUMMARY_PREFIX
from akgentic.llm.events import LlmContextCompactedEvent, LlmMessageEvent


def _tool_turn(i: int) -> list[ModelMessage]:
    from pydantic_ai.messages import ToolReturnPart

    return [
        ModelRequest(parts=[UserPromptPart(f"q{i}")]),
        ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id=f"c{i}")]),
        ModelRequest(parts=[ToolReturnPart("t", "r", tool_call_id=f"c{i}")]),
        ModelResponse(parts=[TextPart(f"a{i}")]),
    ]


def _pairs_intact(messages: list[ModelMessage]) -> bool:
    calls: set[str] = set()
    for m in messages:
        for p in m.parts:
            if p.part_kind == "tool-call":
                calls.add(p.tool_call_id)
            if p.part_kind == "tool-return" and p.tool_call_id not in calls:
                return False
    return True


@pytest.mark.parametrize("keep", [1, 2, 3, 4, 5, 6, 7])
def test_fold_point_never_separates_a_tool_call_from_its_return(keep: int) -> None:
    history = _tool_turn(0) + _tool_turn(1)
    point = fold_point(history, keep)
    tail = history[point:]
    assert _pairs_intact(tail)
    assert point == 0 or isinstance(history[point], ModelRequest)


def test_unknown_strategy_names_the_registered_ones() -> None:
    with pytest.raises(ValueError, match="sliding_window"):
        create_compaction(CompactionConfig(strategy="nope"), ModelConfig(), None)


def test_strategy_may_be_a_dotted_factory_path() -> None:
    cfg = CompactionConfig(strategy="akgentic.llm.compaction.none_strategy")
    assert isinstance(create_compaction(cfg, ModelConfig(), None), NoOpCompaction)
    assert set(COMPACTION_STRATEGIES) >= {"none", "sliding_window", "summarize"}


def _config(**compaction: Any) -> ReactAgentConfig:
    return ReactAgentConfig(compaction_cfg=CompactionConfig(**compaction))


def t(ctx: RunContext[Any]) -> str:
    return "r"


def _add_tool(agent: Any) -> None:
    agent.tool(t)


def _tool_replies(n: int) -> list[Any]:
    out: list[Any] = []
    for i in range(n):
        out += [ModelResponse(parts=[ToolCallPart("t", {})]), f"a{i}"]
    return out


def test_manual_sliding_window_compaction_keeps_recent_turns_and_replays(
    make_agent: Any, recorder: Any
) -> None:
    cfg = _config(strategy="sliding_window", keep_recent_messages=4)
    agent, _ = make_agent(_tool_replies(3), cfg)
    _add_tool(agent)
    for i in range(3):
        agent.run_sync(f"q{i}")
    report = agent.compact()
    assert report == "Compacted: replaced 8 earlier message(s) with a summary."
    messages = agent.context.messages
    assert messages[0].parts[0].content.startswith(SUMMARY_PREFIX)
    assert len(messages) == 5 and _pairs_intact(messages)
    event = recorder.of(LlmContextCompactedEvent)[-1]
    assert event.strategy_id == "sliding_window" and event.replaced_message_count == 8
    assert not any(
        isinstance(e, LlmMessageEvent) and SUMMARY_PREFIX in str(e.message) for e in recorder.events
    )
    fresh, _ = make_agent([], observer=None)
    fresh.restore_context(recorder.events)
    assert fresh.context.messages == messages


def test_compact_with_nothing_to_fold_says_so(make_agent: Any) -> None:
    agent, _ = make_agent([], _config(strategy="sliding_window"))
    assert agent.compact() == "Nothing to compact."


def test_summarize_compaction_asks_the_model_for_a_summary(make_agent: Any, recorder: Any) -> None:
    def summarize(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        transcript = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        assert "USER: q0" in transcript and "TOOL CALL t" in transcript
        return ModelResponse(parts=[TextPart("they asked twice")])

    agent, _ = make_agent([*_tool_replies(2), summarize, "after"], _config(keep_recent_messages=0))
    _add_tool(agent)
    agent.run_sync("q0")
    agent.run_sync("q1")
    agent.compact()
    event = recorder.of(LlmContextCompactedEvent)[-1]
    assert event.summary == "they asked twice" and event.strategy_id == "summarize"
    assert agent.context.messages[0].parts[0].content == SUMMARY_PREFIX + "they asked twice"
    assert agent.run_sync("q2") == "after"


def test_summarize_falls_back_to_a_truncation_note_when_the_model_fails(
    make_agent: Any, recorder: Any
) -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("summarizer down")

    agent, _ = make_agent(["a0", broken], _config(keep_recent_messages=0))
    agent.run_sync("q0")
    agent.compact()
    assert "truncated" in recorder.of(LlmContextCompactedEvent)[-1].summary


def test_auto_compaction_fires_before_a_run_once_the_threshold_is_passed(
    make_agent: Any, recorder: Any
) -> None:
    heavy = ModelResponse(
        parts=[TextPart("a0")], usage=RequestUsage(input_tokens=900, output_tokens=5)
    )
    light = ModelResponse(
        parts=[TextPart("a1")], usage=RequestUsage(input_tokens=10, output_tokens=5)
    )
    cfg = ReactAgentConfig(
        model_cfg=ModelConfig(context_length=1000),
        compaction_cfg=CompactionConfig(strategy="sliding_window", keep_recent_messages=0),
    )
    agent, fn = make_agent([light, heavy, "a2"], cfg)
    agent.run_sync("q0")
    assert not recorder.of(LlmContextCompactedEvent)  # 10 < 850
    agent.run_sync("q1")
    agent.run_sync("q2")
    events = recorder.of(LlmContextCompactedEvent)
    assert len(events) == 1 and events[0].tokens_before == 900
    (sent,) = fn.seen[-1]  # pydantic-ai merges the summary request with the new prompt
    contents = [p.content for p in sent.parts]
    assert contents[0].startswith(SUMMARY_PREFIX) and contents[1:] == ["q2"]


def test_sliding_window_strategy_reports_the_dropped_count() -> None:
    import asyncio

    result = asyncio.run(SlidingWindowCompaction(4).compact(_tool_turn(0) + _tool_turn(1)))
    assert result.replaced_message_count == 4
    assert "dropped 4" in result.summary
