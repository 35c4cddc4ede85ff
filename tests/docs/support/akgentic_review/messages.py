"""``ReviewRequest``: the message a team member sends to have a diff reviewed."""

from __future__ import annotations

from akgentic.core.messages import Message

__all__ = ["ReviewRequest"]


class ReviewRequest(Message):
    """A diff to review; an urgent one is reviewed with one step less strictness."""

    diff: str
    urgent: bool = False
