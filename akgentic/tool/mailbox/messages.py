"""What may travel through an agent's mailbox mid-run, and the words used to announce it."""

from __future__ import annotations

from abc import abstractmethod
from typing import Final

from akgentic.core.messages.message import Message

__all__ = [
    "ABSORBED_PREFIX",
    "ARRIVAL_CLOSING",
    "STOP_COMMAND",
    "MailboxMessage",
    "RunInterruptedError",
    "is_stop_request",
]

ABSORBED_PREFIX: Final = "You took this queued message on in the current run:"
"""Heads the content of a message absorbed through ``read_mailbox``."""

ARRIVAL_CLOSING: Final = (
    "To handle one of them now, call read_mailbox with its id: it then becomes part of "
    "this run and will not come back as a turn of its own. Anything you leave is kept "
    "and delivered after this run."
)
"""Closes a mid-run arrival notice; an override must keep the absorb-or-wait promise."""

STOP_COMMAND: Final = "stop"
"""Name of the cancel command (typed ``/stop``)."""


class MailboxMessage(Message):
    """A message that can be announced to, and absorbed by, a run in progress.

    Subclasses say how they read to the model in full (:meth:`rendering`) and in a
    one-line preview (:meth:`rendering_preview`, used by the arrival notice). A message
    class that should never be absorbed mid-run simply does not extend this one.
    """

    @abstractmethod
    def rendering(self) -> str:
        """The message as the model reads it when it handles it."""

    @abstractmethod
    def rendering_preview(self) -> str:
        """One short line: who sent what (shown before the message is absorbed)."""


class RunInterruptedError(Exception):
    """A run was cancelled while it was in flight (``/stop`` or a CancelMessage)."""


def is_stop_request(message: Message) -> bool:
    """True for a queued ``/stop`` line: a message whose ``content`` is exactly that command."""
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        return False
    words = content.strip().split()
    return len(words) == 1 and words[0] == f"/{STOP_COMMAND}"
