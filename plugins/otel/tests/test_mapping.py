"""The mapping alone, on the synthetic log of bench/observe.py: ids survive any crash point."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from akgentic_otel.mapping import SpanRecord, TraceBuilder, trace_log

BENCH = Path(__file__).resolve().parents[3] / "bench" / "observe.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_observe", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _key(span: SpanRecord) -> tuple[int, int, int | None, str, int]:
    return (span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns)


def _log(events: int) -> tuple[Any, list[Any]]:
    team_id, stored = _bench().synthetic_log(events)
    return team_id, stored


def test_every_prefix_of_the_log_keeps_the_ids_of_the_spans_it_has() -> None:
    team_id, stored = _log(300)
    full = {s.span_id: s for s in trace_log(team_id, stored)}
    for cut in range(1, len(stored) + 1):
        # A process killed after ``cut`` events left this log: what it exports then
        # must be what the whole log exports for the same spans (a span still open
        # may learn its model's name later; its id, parent and start stay).
        for span in trace_log(team_id, stored[:cut]):
            later = full[span.span_id]
            assert (span.trace_id, span.parent_id, span.start_ns) == (
                later.trace_id,
                later.parent_id,
                later.start_ns,
            ), (cut, span.name)
            if span.complete and span.parent_id is not None:
                assert _key(span) == _key(later) and span.end_ns == later.end_ns


def test_one_trace_per_message_from_the_human() -> None:
    team_id, stored = _log(1000)
    spans = trace_log(team_id, stored)
    started = [
        e.event
        for e in stored
        if type(e.event).__name__ == "SentMessage"
        and e.event.sender.is_user_proxy
        and e.event.message.parent_id is None
    ]
    roots = [s for s in spans if s.parent_id is None]
    assert len(roots) == len({s.trace_id for s in spans}) == len(started)
    by_id = {s.span_id: s for s in spans}
    for span in spans:
        if span.parent_id is not None:
            parent = by_id[span.parent_id]
            assert parent.trace_id == span.trace_id
            assert parent.start_ns <= span.start_ns


def test_spans_handed_out_one_by_one_are_the_spans_of_the_whole_log() -> None:
    team_id, stored = _log(1000)
    builder = TraceBuilder(team_id)
    handed: dict[int, SpanRecord] = {}
    for event in stored:
        builder.feed(event)
        for span in builder.take_finished():
            handed[span.span_id] = span
    whole = trace_log(team_id, stored)
    complete = [s for s in whole if s.complete]
    assert {_key(s) for s in complete} <= {_key(s) for s in handed.values()}
    assert all(handed[s.span_id].end_ns == s.end_ns for s in complete)


def test_content_is_absent_unless_asked() -> None:
    team_id, stored = _log(200)
    plain = trace_log(team_id, stored)
    assert not any(k.startswith("gen_ai.input") for s in plain for k in s.attributes)
    rich = trace_log(team_id, stored, capture_content=True)
    assert any("gen_ai.input.messages" in s.attributes for s in rich)
    assert any("gen_ai.tool.call.result" in s.attributes for s in rich)
