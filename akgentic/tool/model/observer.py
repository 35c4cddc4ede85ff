"""``ModelSwitchToolObserver`` and ``ModelRow``, the tool layer's view of a model roster.

The roster's own configuration lives in the LLM layer, which the tool layer may not
import. ``ModelRow`` is the tool layer's projection of one roster entry; the agent
layer, which may import both, maps one onto the other.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from akgentic.tool.core.observer import ActorToolObserver

__all__ = ["ModelRow", "ModelSwitchToolObserver"]


class ModelRow(BaseModel):
    """One model of an agent's roster, as a card may show it.

    Built fresh on every call and never stored, so no field has a default: a missing
    value is a construction bug and must fail loudly.

    Attributes:
        key: Roster key, ``"provider:model"``; what ``switch_model`` accepts.
        provider: Provider name (``"openai"``).
        model: Model name at that provider.
        context_length: Context window in tokens, or None when unknown.
        active: True for the model currently in force.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    provider: str
    model: str
    context_length: int | None
    active: bool


@runtime_checkable
class ModelSwitchToolObserver(ActorToolObserver, Protocol):
    """An agent whose model can be listed and switched at run time."""

    def list_model_rows(self) -> list[ModelRow]:
        """The roster, in configuration order."""
        ...

    def switch_model(self, key: str) -> str:
        """Make the roster entry ``key`` the model in force; returns a confirmation.

        Raises:
            RetriableError: ``key`` is not in the roster (the message lists the keys).
        """
        ...
