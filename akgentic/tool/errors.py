"""Exceptions shared by tool cards, the tool factory and the command registry."""

from __future__ import annotations

# Defined in the actor runtime so that every layer (vector, agent, tools) can raise it;
# this module stays its documented home for card authors.
from akgentic.core.errors import RetriableError

__all__ = [
    "CommandNotRecognized",
    "RetriableError",
    "RoleNotHireableError",
    "ToolObserverGone",
]


class RoleNotHireableError(RetriableError):
    """The requested role exists in the catalog but is marked as not hireable."""


class CommandNotRecognized(Exception):  # noqa: N818 - public name fixed by the contract
    """The first word of a slash-command line is not a registered command.

    Only raised before anything runs: callers use it to let the text fall through
    to the normal message path. Once a command has been identified, every later
    failure is reported as a result string instead.

    Attributes:
        name: The command name that was looked up (without the leading ``/``).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"Unknown command '/{name}'" if name else "Empty command line")


class ToolObserverGone(RuntimeError):  # noqa: N818 - public name fixed by the contract
    """The agent a tool card was attached to no longer exists.

    Cards keep only a weak reference to their observer so that a tool never keeps
    a stopped agent alive; touching the observer after it was collected raises this.
    """
