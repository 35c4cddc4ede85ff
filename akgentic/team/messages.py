"""Messages that the team layer itself puts on a team's event stream."""

from __future__ import annotations

from typing import Literal

from akgentic.core.messages.message import Message

__all__ = ["WelcomeMessage"]


class WelcomeMessage(Message):
    """The card's static greeting, published once when a team is first created.

    It is recorded like any other message (so it survives stop and resume) but
    is never re-published on resume.
    """

    content: str
    display_type: Literal["human", "ai", "other"] = "other"
