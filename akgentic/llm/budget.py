"""The agent-tier (lifetime) usage budget and the run-tier conversion.

pydantic-ai enforces the run tier itself while a run goes; the lifetime tier is
checked here before a run starts, because a run's cost is unknown until it ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from akgentic.llm.config import AgentUsageLimits, RunUsageLimits
from akgentic.llm.errors import AgentUsageLimitError

if TYPE_CHECKING:
    from pydantic_ai.usage import UsageLimits

__all__ = ["DEFAULT_CONCLUSION_REASON", "LifetimeBudget", "LimitRecovery", "to_pydantic_limits"]

DEFAULT_CONCLUSION_REASON = (
    "This turn has used up its budget of model requests or tokens. Do not call any tool: "
    "answer now with the best result you can give from what you already know."
)


def to_pydantic_limits(limits: RunUsageLimits) -> UsageLimits:
    """The pydantic-ai ``UsageLimits`` for one run."""
    from pydantic_ai.usage import UsageLimits

    return UsageLimits(
        request_limit=limits.run_request_limit,
        tool_calls_limit=limits.tool_calls_limit,
        input_tokens_limit=limits.input_tokens_limit,
        output_tokens_limit=limits.output_tokens_limit,
        total_tokens_limit=limits.total_tokens_limit,
    )


@dataclass
class LifetimeBudget:
    """Counts an agent's runs and tokens and refuses a run the limits no longer allow."""

    limits: AgentUsageLimits
    run_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def preflight(self) -> None:
        """Check the token caps (consuming nothing), then take one run from the run cap."""
        lim = self.limits
        totals = (
            ("input_tokens", self.input_tokens, lim.input_tokens_limit),
            ("output_tokens", self.output_tokens, lim.output_tokens_limit),
            ("total_tokens", self.input_tokens + self.output_tokens, lim.total_tokens_limit),
        )
        for name, used, cap in totals:
            if cap is not None and used > cap:
                raise AgentUsageLimitError(
                    f"Exceeded the agent {name}_limit of {cap} ({name}={used})"
                )
        if lim.agent_request_limit is not None and self.run_count >= lim.agent_request_limit:
            raise AgentUsageLimitError(
                f"Exceeded the agent_request_limit of {lim.agent_request_limit} "
                f"(run_count={self.run_count})"
            )
        self.run_count += 1

    def add(self, input_tokens: int, output_tokens: int) -> None:
        """Fold a finished (or failed) run's tokens into the lifetime totals."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def seed(self, run_count: int, input_tokens: int, output_tokens: int) -> None:
        """Set the counters (after a restore); assignment, so seeding twice is harmless."""
        self.run_count = run_count
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


class LimitRecovery:
    """Decides what happens when a run breaks its run-tier limits.

    The default answers with a prompt for one last, tool-free model turn so the
    caller still gets an answer. Subclass and return None from :meth:`decide` to
    raise :class:`~akgentic.llm.errors.RunUsageLimitError` instead.
    """

    def decide(self, error: Exception) -> str | None:
        """The prompt of the concluding turn, or None to raise the breach."""
        return DEFAULT_CONCLUSION_REASON


class RaiseOnLimit(LimitRecovery):
    """Recovery policy that never concludes: every run-tier breach raises."""

    def decide(self, error: Exception) -> str | None:
        """Always None."""
        return None
