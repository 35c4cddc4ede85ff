"""Cost estimates and usage summaries over :class:`LlmUsageEvent` lists.

Prices come from the ``genai-prices`` database (imported on first use); an
unknown model costs 0.0 rather than failing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from akgentic.llm.events import LlmUsageEvent

__all__ = ["AgentUsageSummary", "ModelUsage", "RunUsageSummary", "aggregate_usage", "estimate_cost"]

logger = logging.getLogger(__name__)


def estimate_cost(
    model_name: str,
    provider_name: str,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float:
    """Estimated USD price of one response; 0.0 when the model is not in the price list."""
    if not model_name or (input_tokens == 0 and output_tokens == 0):
        return 0.0
    try:
        import genai_prices

        usage = genai_prices.Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
        )
        calc = genai_prices.calc_price(usage, model_name, provider_id=provider_name or None)
        return float(calc.total_price)
    except Exception as exc:  # unknown model/provider, or no price data
        logger.debug("No price for %s/%s: %s", provider_name, model_name, exc)
        return 0.0


@dataclass(frozen=True)
class ModelUsage:
    """Usage of one model summed over many responses."""

    model_name: str
    provider_name: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class RunUsageSummary:
    """Usage of one run (all its responses, all models)."""

    run_id: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    models: tuple[str, ...] = field(default_factory=tuple)


class AgentUsageSummary(BaseModel):
    """Totals of an agent's usage, per model and optionally per run."""

    by_model: dict[str, ModelUsage] = {}
    runs: list[RunUsageSummary] = []
    total_requests: int = 0
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    total_cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.total_input_tokens + self.total_output_tokens


def aggregate_usage(events: Iterable[LlmUsageEvent], *, by_run: bool = False) -> AgentUsageSummary:
    """Sum usage events per ``provider:model`` (and per run, in first-seen order, if asked)."""
    models: dict[str, ModelUsage] = {}
    runs: dict[str, RunUsageSummary] = {}
    totals = [0, 0, 0]
    cost = 0.0
    for ev in events:
        key = f"{ev.provider_name}:{ev.model_name}"
        m = models.get(key) or ModelUsage(ev.model_name, ev.provider_name)
        models[key] = ModelUsage(
            model_name=m.model_name,
            provider_name=m.provider_name,
            requests=m.requests + ev.requests,
            input_tokens=m.input_tokens + ev.input_tokens,
            output_tokens=m.output_tokens + ev.output_tokens,
            cache_read_tokens=m.cache_read_tokens + ev.cache_read_tokens,
            cache_write_tokens=m.cache_write_tokens + ev.cache_write_tokens,
            cost_usd=m.cost_usd + ev.estimated_cost_usd,
        )
        totals[0] += ev.requests
        totals[1] += ev.input_tokens
        totals[2] += ev.output_tokens
        cost += ev.estimated_cost_usd
        if by_run:
            r = runs.get(ev.run_id) or RunUsageSummary(ev.run_id)
            names = r.models if key in r.models else (*r.models, key)
            runs[ev.run_id] = RunUsageSummary(
                run_id=ev.run_id,
                requests=r.requests + ev.requests,
                input_tokens=r.input_tokens + ev.input_tokens,
                output_tokens=r.output_tokens + ev.output_tokens,
                cost_usd=r.cost_usd + ev.estimated_cost_usd,
                models=names,
            )
    return AgentUsageSummary(
        by_model=models,
        runs=list(runs.values()),
        total_requests=totals[0],
        total_input_tokens=totals[1],
        total_output_tokens=totals[2],
        total_cost_usd=cost,
    )
