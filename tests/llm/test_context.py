"""ContextManager: event order, sliding window, folds, restore, pending prompts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from akgentic.llm.context import SUMMARY_PREFIX, ContextManager, ContextObserver
from akgentic.llm.events import (
    LlmContextClearedEvent,
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmSystemPromptEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
)


class Rec:
    def __init__(self) -> None:
        self.events: list[object] = []

    def notify_event(self, event: object) -> None:
        self.events.append(event)


def _ctx(max_messages: int | None = None) -> tuple[ContextManager, Rec]:
    ctx = ContextManager(max_messages=max_messages)
    rec = Rec()
    ctx.subscribe(rec)
    return ctx, rec


def _turn(i: int, *, system: bool = False) -> list[ModelRequest | ModelResponse]:
    parts: list[SystemPromptPart | UserPromptPart] = [UserPromptPart(f"q{i}")]
    if system:
        parts.insert(0, SystemPromptPart("sys"))
    return [ModelRequest(parts=parts), ModelResponse(parts=[TextPart(f"a{i}")])]


def test_recorder_satisfies_the_observer_protocol() -> None:
    assert isinstance(Rec(), ContextObserver)


def test_response_events_come_in_message_tool_usage_order() -> None:
    ctx, rec = _ctx()
    response = ModelResponse(
        parts=[
            TextPart("let me check"),
            ToolCallPart("a", {"x": 1}, tool_call_id="c1"),
            ToolCallPart("b", '{"y": 2}', tool_call_id="c2"),
        ],
        usage=RequestUsage(input_tokens=30, output_tokens=9),
        model_name="m",
        provider_name="p",
        run_id="run-1",
    )
    ctx.add_message(response)
    assert [type(e) for e in rec.events] == [
        LlmMessageEvent,
        ToolCallEvent,
        ToolCallEvent,
        LlmUsageEvent,
    ]
    calls = [e for e in rec.events if isinstance(e, ToolCallEvent)]
    assert [(c.tool_name, c.tool_call_id, c.run_id) for c in calls] == [
        ("a", "c1", "run-1"),
        ("b", "c2", "run-1"),
    ]
    assert calls[0].arguments == '{"x":1}'
    usage = rec.events[-1]
    assert isinstance(usage, LlmUsageEvent)
    assert (usage.input_tokens, usage.output_tokens, usage.run_id) == (30, 9, "run-1")
    assert ctx.last_input_tokens == 30


@pytest.mark.filterwarnings("ignore:.*RetryPromptPart")
def test_tool_returns_and_retries_report_success_flags() -> None:
    ctx, rec = _ctx()
    ctx.add_message(
        ModelRequest(
            parts=[
                ToolReturnPart("a", "ok", tool_call_id="c1"),
                ToolReturnPart("b", "bad args", tool_call_id="c2", outcome="retried"),
                RetryPromptPart("legacy retry", tool_name="c", tool_call_id="c3"),
                RetryPromptPart("no tool here"),
            ]
        )
    )
    returns = [e for e in rec.events if isinstance(e, ToolReturnEvent)]
    assert [(r.tool_call_id, r.success) for r in returns] == [
        ("c1", True),
        ("c2", False),
        ("c3", False),
    ]
    assert returns[0].run_id == "None"


def test_usage_event_run_id_is_empty_without_a_run() -> None:
    ctx, rec = _ctx()
    ctx.add_message(ModelResponse(parts=[TextPart("x")]))
    assert isinstance(rec.events[-1], LlmUsageEvent)
    assert rec.events[-1].run_id == ""


def test_an_unknown_part_kind_is_refused() -> None:
    @dataclass
    class Weird:
        part_kind: str = "brand-new-kind"

    ctx, _ = _ctx()
    with pytest.raises(ValueError, match="brand-new-kind"):
        ctx.add_message(ModelResponse(parts=[Weird()]))  # type: ignore[list-item]
    assert ctx.messages == []


def test_messages_property_returns_a_copy() -> None:
    ctx, _ = _ctx()
    ctx.add_message(_turn(0)[0])
    ctx.messages.clear()  # a copy: the context keeps its message
    assert len(ctx.messages) == 1


def test_sliding_window_keeps_system_messages_and_the_most_recent() -> None:
    ctx, _ = _ctx(max_messages=3)
    for message in [*_turn(0, system=True), *_turn(1), *_turn(2)]:
        ctx.add_message(message)
    kept = ctx.messages
    assert len(kept) == 3
    assert any(isinstance(p, SystemPromptPart) for p in kept[0].parts)
    assert [m.parts[0].content for m in kept[1:]] == ["q2", "a2"]  # type: ignore[union-attr]


def test_sliding_window_drops_tool_returns_whose_call_fell_out() -> None:
    ctx, _ = _ctx(max_messages=2)
    ctx.add_message(ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="c1")]))
    ctx.add_message(ModelRequest(parts=[ToolReturnPart("t", "r", tool_call_id="c1")]))
    ctx.add_message(ModelResponse(parts=[TextPart("done")]))
    assert [type(m) for m in ctx.messages] == [ModelResponse]


def test_negative_window_is_refused() -> None:
    with pytest.raises(ValueError):
        ContextManager(max_messages=-1)


def test_restore_is_silent_ignores_the_window_and_copies_its_input() -> None:
    ctx, rec = _ctx(max_messages=1)
    source = [*_turn(0), *_turn(1)]
    ctx.restore(source)
    source.clear()
    assert len(ctx.messages) == 4
    assert rec.events == []


def test_user_prompts_before_the_first_run_are_held_then_drained() -> None:
    ctx, rec = _ctx()
    ctx.append_user_prompt("note 1")
    assert ctx.messages == [] and rec.events == []
    assert ctx.drain_pending_user_prompts() == ["note 1"]
    assert ctx.drain_pending_user_prompts() == []
    ctx.add_message(_turn(0)[0])
    ctx.append_user_prompt("note 2")
    assert ctx.messages[-1].parts[0].content == "note 2"  # type: ignore[union-attr]
    assert isinstance(rec.events[-1], LlmMessageEvent)


def test_system_prompt_is_recorded_only_when_it_changes() -> None:
    ctx, rec = _ctx()
    first = [ModelRequest(parts=[SystemPromptPart("A"), UserPromptPart("q")])]
    ctx.record_system_prompt("r1", first)
    ctx.record_system_prompt("r2", first)
    ctx.record_system_prompt("r3", [ModelRequest(parts=[SystemPromptPart("B")])])
    events = [e for e in rec.events if isinstance(e, LlmSystemPromptEvent)]
    assert [e.run_id for e in events] == ["r1", "r3"]
    ctx.seed_system_prompt_hash(events[-1].content_hash)
    ctx.record_system_prompt("r4", [ModelRequest(parts=[SystemPromptPart("B")])])
    assert len([e for e in rec.events if isinstance(e, LlmSystemPromptEvent)]) == 2


def test_system_prompt_hash_depends_on_part_boundaries() -> None:
    ctx, rec = _ctx()
    ctx.record_system_prompt("r1", [ModelRequest(parts=[SystemPromptPart("ab")])])
    ctx.record_system_prompt(
        "r2", [ModelRequest(parts=[SystemPromptPart("a"), SystemPromptPart("b")])]
    )
    assert len(rec.events) == 2


def test_clear_context_empties_history_and_reports_the_count() -> None:
    ctx, rec = _ctx()
    for message in _turn(0):
        ctx.add_message(message)
    assert ctx.clear_context("r9") == 2
    assert ctx.messages == []
    assert rec.events[-1] == LlmContextClearedEvent("r9", 2)


def test_compaction_fold_keeps_system_parts_and_inserts_the_summary() -> None:
    ctx, rec = _ctx()
    for message in [*_turn(0, system=True), *_turn(1), *_turn(2)]:
        ctx.add_message(message)
    before = len(rec.events)
    event = LlmContextCompactedEvent("", "summarize", "earlier stuff", 4)
    ctx.compact(event)
    messages = ctx.messages
    assert [p.part_kind for p in messages[0].parts] == ["system-prompt"]
    assert messages[1].parts[0].content == SUMMARY_PREFIX + "earlier stuff"  # type: ignore[union-attr]
    assert [m.parts[0].content for m in messages[2:]] == ["q2", "a2"]  # type: ignore[union-attr]
    assert rec.events[before:] == [event]


def test_compaction_fold_drops_returns_orphaned_by_the_fold() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("go")]),
        ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("t", "r", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    folded = ContextManager.fold_compaction(history, LlmContextCompactedEvent("", "custom", "s", 2))
    assert all(p.part_kind != "tool-return" for m in folded for p in m.parts)
    assert isinstance(folded[-1], ModelResponse)
