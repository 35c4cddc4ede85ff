"""Usage aggregation, cost estimates and the public surface of akgentic.llm."""

from __future__ import annotations

import akgentic.llm as llm
from akgentic.llm import LlmUsageEvent, aggregate_usage, estimate_cost


def test_every_exported_name_resolves() -> None:
    for name in llm.__all__:
        assert getattr(llm, name) is not None, name


def test_known_models_get_a_positive_price_and_unknown_ones_zero() -> None:
    assert estimate_cost("gpt-4o", "openai", 1_000_000, 1_000_000) > 0
    assert estimate_cost("no-such-model-xyz", "nowhere", 1000, 1000) == 0.0
    assert estimate_cost("gpt-4o", "openai", 0, 0) == 0.0


def test_usage_is_aggregated_per_model_and_per_run() -> None:
    events = [
        LlmUsageEvent("r1", "a", "p", 10, 5, estimated_cost_usd=0.5),
        LlmUsageEvent("r1", "b", "p", 1, 1, estimated_cost_usd=0.25),
        LlmUsageEvent("r2", "a", "p", 20, 10, estimated_cost_usd=1.0),
    ]
    summary = aggregate_usage(events, by_run=True)
    assert summary.by_model["p:a"].input_tokens == 30
    assert summary.by_model["p:a"].requests == 2
    assert (summary.total_requests, summary.total_tokens) == (3, 47)
    assert summary.total_cost_usd == 1.75
    assert [(r.run_id, r.requests, r.models) for r in summary.runs] == [
        ("r1", 2, ("p:a", "p:b")),
        ("r2", 1, ("p:a",)),
    ]
    assert aggregate_usage(events).runs == []
