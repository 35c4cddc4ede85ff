"""The ``budget:`` block of a team card, on its own.

The team card imports this module to validate its block, so it holds the one model and
the limit names, and nothing else: the counter, its events and its errors
(:mod:`akgentic.llm.team_budget`) are loaded when a team with a budget runs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["LIMIT_NAMES", "BudgetLimits"]

#: The limits a budget block may set, in the order they are shown.
LIMIT_NAMES = ("input_tokens", "output_tokens", "requests", "tool_calls", "usd", "wall_time_s")


class BudgetLimits(BaseModel):
    """The ``budget:`` block of a team card.

    Attributes:
        input_tokens: Input (prompt) tokens of every model request of the team.
        output_tokens: Output (completion) tokens.
        requests: Model requests (and calls of remote members).
        tool_calls: Tool calls the models asked for.
        usd: Estimated cost in US dollars, from the price table
            (:func:`akgentic.llm.pricing.estimate_cost`); a model missing from the
            table costs 0.
        wall_time_s: Seconds spent in model requests and remote calls, summed over
            members (two members working for a minute at once spend 120 s).
        warn_at: Fraction of any limit at which the lead is warned (once per crossing).
        hire_floor: Hiring is refused while any limit has less than this fraction left.
        hire_floor_usd: Hiring is refused while less than this many dollars are left
            (needs ``usd``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int | None = Field(default=None, gt=0, strict=True)
    output_tokens: int | None = Field(default=None, gt=0, strict=True)
    requests: int | None = Field(default=None, gt=0, strict=True)
    tool_calls: int | None = Field(default=None, gt=0, strict=True)
    usd: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    wall_time_s: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    warn_at: float = Field(default=0.8, gt=0, lt=1, strict=True)
    hire_floor: float | None = Field(default=None, gt=0, lt=1, strict=True)
    hire_floor_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)

    @model_validator(mode="after")
    def _coherent(self) -> BudgetLimits:
        if all(getattr(self, name) is None for name in LIMIT_NAMES):
            raise ValueError(f"set at least one limit ({', '.join(LIMIT_NAMES)})")
        if self.hire_floor_usd is not None:
            if self.usd is None:
                raise ValueError("hire_floor_usd needs a usd limit")
            if self.hire_floor_usd >= self.usd:
                raise ValueError(
                    f"hire_floor_usd ({self.hire_floor_usd:g}) must be below usd ({self.usd:g})"
                )
        return self

    def caps(self) -> dict[str, float | None]:
        """Every limit by name (None: not limited)."""
        return {name: getattr(self, name) for name in LIMIT_NAMES}
