"""What an agent does when a usage budget runs out: tell the human, report a warning."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, NoReturn, ParamSpec, TypeVar

from akgentic.core.agent import WarningError
from akgentic.llm.errors import UsageLimitError

if TYPE_CHECKING:
    from akgentic.agent.agent import BaseAgent

__all__ = ["escalate_usage_limit", "guard_usage_limits", "usage_limit_notice"]

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A", bound="BaseAgent")


def usage_limit_notice(agent_name: str, error: Exception) -> str:
    """The text the human reads when ``agent_name`` ran out of budget."""
    return (
        f"{agent_name} has used up its usage budget ({error}) and stopped working. "
        "Please check what it was doing and tell it how to continue."
    )


def escalate_usage_limit(agent: BaseAgent, error: UsageLimitError) -> NoReturn:
    """Notify the team's human, then raise a WarningError (reported, not a failure)."""
    agent.notify_human(usage_limit_notice(agent.config.name, error))
    raise WarningError(f"LLM usage limit exceeded: {error}") from error


def guard_usage_limits(
    method: Callable[Concatenate[A, P], R],
) -> Callable[Concatenate[A, P], R]:
    """Decorate an agent method that runs the model: a budget breach is escalated."""

    @functools.wraps(method)
    def guarded(self: A, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except UsageLimitError as error:
            escalate_usage_limit(self, error)

    return guarded
