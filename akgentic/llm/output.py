"""Output types with behaviour the run loop knows about (pydantic only, cheap to import)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self

from pydantic import BaseModel

__all__ = ["MergeableOutput"]


class MergeableOutput(BaseModel):
    """A structured output of which several, sent back to back, make one answer.

    Some models split a reply into a commentary and a final part, each a complete
    JSON object. When the text of a reply is several such objects, the run loop
    validates each and returns ``merge`` of them instead of refusing the reply.
    """

    @classmethod
    def merge(cls, outputs: Iterable[Self]) -> Self:
        """One output standing for all of ``outputs`` (in the order the model sent them)."""
        raise NotImplementedError(f"{cls.__name__} must implement merge()")
