"""``ContextState``: a snapshot of volatile tool state the model should keep seeing."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Self, TypeAlias

from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = ["ContextProvider", "ContextState"]


class ContextState(SerializableBaseModel, ABC):
    """Diffable state served on the ``LLM_CONTEXT`` channel.

    A card's context provider returns a fresh snapshot each turn; the
    :class:`~akgentic.tool.core.context_update.ContextUpdater` keeps the last snapshot
    delivered (the *baseline*) and asks the new one what changed. Snapshots are stored
    in the agent's persisted state, so they must be plain serializable models.
    """

    @abstractmethod
    def render_full(self) -> str:
        """The whole state, as the model should read it the first time.

        Return ``""`` when there is nothing worth saying.
        """

    @abstractmethod
    def render_delta(self, previous: Self) -> str | None:
        """What changed since ``previous``; None when nothing did.

        ``previous`` is always of the same concrete class as ``self``: a state seen for
        the first time, or whose class changed, is rendered in full instead.
        """


ContextProvider: TypeAlias = Callable[[], ContextState | None]
"""A zero-argument callable returning the current snapshot, or None when unavailable.

Providers must not raise: a card whose observer is gone returns None. The provider's
``__name__`` is its key in the baselines, so it must be unique within one agent.
"""
