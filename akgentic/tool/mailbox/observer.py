"""``MailboxToolObserver``: peeking at and absorbing the owning agent's queued messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from uuid import UUID

from akgentic.tool.core.observer import ToolObserver

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = ["MailboxToolObserver"]


@runtime_checkable
class MailboxToolObserver(ToolObserver, Protocol):
    """An observer giving access to its agent's inbox; needs no reach into other actors."""

    def get_mailbox(self) -> list[Message]:
        """Messages waiting in the inbox, oldest first (nothing is removed)."""
        ...

    def consume_mailbox(self, ids: Sequence[UUID] | Sequence[str]) -> list[Message]:
        """Take the named messages out of the inbox into the current run."""
        ...
