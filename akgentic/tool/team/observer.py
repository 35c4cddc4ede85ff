"""``TeamManagementToolObserver``: what a card that hires and fires needs from its agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from akgentic.tool.core.observer import ActorToolObserver

if TYPE_CHECKING:
    from akgentic.core.actor_address import ActorAddress
    from akgentic.core.agent_config import BaseConfig

__all__ = ["TeamManagementToolObserver"]


@runtime_checkable
class TeamManagementToolObserver(ActorToolObserver, Protocol):
    """An agent that can create actors and report membership changes.

    Hired members are created as children of the hiring agent.
    """

    def createActor(self, actor_class: type[Any], *, config: BaseConfig) -> ActorAddress:
        """Start ``actor_class`` with ``config`` as a child of this agent."""
        ...

    def on_hire(self, address: ActorAddress) -> None:
        """Called after a member was hired."""
        ...

    def on_fire(self, address: ActorAddress) -> None:
        """Called after a member was fired."""
        ...
