"""Errors raised by the LLM layer."""

from __future__ import annotations

__all__ = [
    "AgentUsageLimitError",
    "ContextOverflowError",
    "ModelSwitchError",
    "ReplyTruncatedError",
    "RunCancelledError",
    "RunStoppedError",
    "RunUsageLimitError",
    "TurnFailedError",
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


class RunCancelledError(Exception):
    """The run in flight was cancelled on request (a human's ``/stop``); later runs go on."""


class ReplyTruncatedError(Exception):
    """The model's reply was cut off by its output-token cap (``finish_reason="length"``).

    ``max_tokens`` is the last cap asked for (None: the server's own), ``tries`` how many
    requests were made for this reply.
    """

    def __init__(self, max_tokens: int | None, tries: int) -> None:
        cap = f"max_tokens={max_tokens}" if max_tokens is not None else "the server's output cap"
        times = "1 try" if tries == 1 else f"{tries} tries"
        super().__init__(f"the model's reply was cut off at {cap} ({times})")
        self.max_tokens = max_tokens
        self.tries = tries


class TurnFailedError(Exception):
    """An agent's turn failed; the message is the cause in plain words (one line).

    Raised by the agent layer from the original error (kept as ``__cause__`` for the log).
    """

    def __init__(self, cause: str, kind: str = "error") -> None:
        super().__init__(cause)
        self.cause = cause
        self.kind = kind


class ContextOverflowError(Exception):
    """A message alone is larger than the model's context; it was not sent.

    ``tokens`` is its estimated size, ``context`` the model's context in tokens.
    """

    def __init__(self, tokens: int, context: int) -> None:
        super().__init__(
            f"the message (about {tokens:,} tokens) is larger than the model's context "
            f"({context:,})"
        )
        self.tokens = tokens
        self.context = context
