"""``Reviewer``: an agent that reviews the diffs it is sent and keeps its verdicts."""

from __future__ import annotations

from pydantic import BaseModel

from akgentic.core import Akgent, BaseConfig, BaseState
from akgentic.core.messages import ResultMessage

from .messages import ReviewRequest

__all__ = ["LEFTOVERS", "ReviewConfig", "ReviewRequest", "ReviewState", "Reviewer", "Verdict"]

LEFTOVERS = ("print(", "breakpoint(", "TODO")
"""What an added line must not hold: debugging leftovers and unfinished work."""


class ReviewConfig(BaseConfig):
    """How strict the reviewer is.

    At 0 or below it approves every diff; above, it asks for changes when an added line
    holds a leftover. An urgent request is reviewed one step less strictly.
    """

    strictness: int = 1


class Verdict(BaseModel):
    """The outcome of one review: the added lines flagged, and whether it passed."""

    approved: bool
    flagged: list[str] = []
    urgent: bool = False


class ReviewState(BaseState):
    """Every verdict the reviewer has given, oldest first."""

    verdicts: list[Verdict] = []


class Reviewer(Akgent[ReviewConfig, ReviewState]):
    """Reviews each ``ReviewRequest``, records the verdict and answers its sender."""

    def on_start(self) -> None:
        """Start with no verdicts, observed so each new one is checkpointed."""
        self.state = ReviewState().observer(self)

    def receiveMsg_ReviewRequest(self, message: ReviewRequest) -> None:
        """Flag added lines holding a leftover; approve if nothing is flagged or tolerated."""
        lines = message.diff.splitlines()
        added = [line[1:].strip() for line in lines if line[:1] == "+" and line[:3] != "+++"]
        flagged = [line for line in added if any(mark in line for mark in LEFTOVERS)]
        strictness = self.config.strictness - (1 if message.urgent else 0)
        verdict = Verdict(
            approved=strictness <= 0 or not flagged, flagged=flagged, urgent=message.urgent
        )
        self.state.verdicts.append(verdict)
        if message.sender is not None:
            answer = "approved" if verdict.approved else "changes requested: " + "; ".join(flagged)
            self.send(message.sender, ResultMessage(content=answer))
