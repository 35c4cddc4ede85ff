"""Errors raised by the LLM layer."""

from __future__ import annotations

__all__ = [
    "AgentUsageLimitError",
    "ModelSwitchError",
    "RunStoppedError",
    "RunUsageLimitError",
    "UsageLimitError",
]


class UsageLimitError(Exception):
    """A usage budget was exhausted. Catch this to handle both tiers alike."""


class RunUsageLimitError(UsageLimitError):
    """One run went over its :class:`~akgentic.llm.config.RunUsageLimits`."""


class AgentUsageLimitError(UsageLimitError):
    """The agent's lifetime :class:`~akgentic.llm.config.AgentUsageLimits` refuse another run."""


class ModelSwitchError(ValueError):
    """A ``switch_model`` request was refused; the active model is unchanged."""


class RunStoppedError(Exception):
    """The agent is stopping: its run in flight was cancelled, and no new run starts."""
