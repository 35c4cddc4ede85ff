"""The global observer protocols: how a card reaches the running system.

A card is inert configuration. When the factory wires it, it receives an *observer*
(normally the agent that owns it) and from then on does everything through it. Two
levels are global: :class:`ToolObserver` (emit events) and
:class:`ActorToolObserver` (also reach actors and the persisted tool state). A card
that needs more declares its own protocol beside itself, extending whichever of the
two it needs, and narrows to it in a private accessor (never in the signature of
``observer()``, which the factory calls uniformly).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable
from uuid import UUID

if TYPE_CHECKING:
    from akgentic.core.actor_address import ActorAddress
    from akgentic.tool.core.state import ToolState

__all__ = ["ActorToolObserver", "ToolObserver", "ToolStateCarrier", "weak_observer"]

T = TypeVar("T")
ObserverT = TypeVar("ObserverT")


def weak_observer(observer: ObserverT) -> weakref.ReferenceType[ObserverT]:
    """A weak reference to ``observer``, or a TypeError saying why one is required.

    Everything in the tool layer that keeps an observer keeps it this way, so that
    no tool, closure, registry or updater keeps a stopped agent alive.
    """
    try:
        return weakref.ref(observer)
    except TypeError:
        raise TypeError(
            f"{type(observer).__name__} cannot be referenced weakly; an observer must "
            "support weak references so that tools never keep their agent alive"
        ) from None


@runtime_checkable
class ToolObserver(Protocol):
    """The least a card may ask of its owner: put an event on the team's stream."""

    def notify_event(self, event: object) -> None:
        """Publish ``event`` (a serializable model) to the orchestrator's event stream."""
        ...


@runtime_checkable
class ToolStateCarrier(Protocol):
    """An agent state that carries the tool layer's persisted slot."""

    @property
    def tool_state(self) -> ToolState:
        """The current :class:`~akgentic.tool.core.state.ToolState` (never cache it)."""
        ...


@runtime_checkable
class ActorToolObserver(ToolObserver, Protocol):
    """An observer that is an actor of a team: addresses, proxies and tool state.

    ``proxy_ask`` blocks until the target answers, so use it only when the caller
    needs the result; ``proxy_tell`` never blocks and suits fire-and-forget calls.
    """

    @property
    def myAddress(self) -> ActorAddress:
        """The owning actor's own address."""
        ...

    @property
    def orchestrator(self) -> ActorAddress | None:
        """Address of the team's orchestrator (None outside a team)."""
        ...

    @property
    def team_id(self) -> UUID:
        """Id of the team the owner belongs to."""
        ...

    @property
    def user_id(self) -> str | None:
        """Id of the user the team works for, if known."""
        ...

    @property
    def state(self) -> ToolStateCarrier:
        """The owner's state, which carries the tool layer's slot.

        Read ``observer.state.tool_state`` on every use: the agent replaces its state
        object wholesale when restored.
        """
        ...

    @overload
    def proxy_ask(
        self, actor: ActorAddress, actor_type: type[T], timeout: float | None = None
    ) -> T: ...

    @overload
    def proxy_ask(
        self, actor: ActorAddress, actor_type: None = None, timeout: float | None = None
    ) -> Any: ...

    def proxy_ask(
        self, actor: ActorAddress, actor_type: type[Any] | None = None, timeout: float | None = None
    ) -> Any:
        """A proxy on ``actor`` whose method calls wait for the answer."""
        ...

    @overload
    def proxy_tell(self, actor: ActorAddress, actor_type: type[T]) -> T: ...

    @overload
    def proxy_tell(self, actor: ActorAddress, actor_type: None = None) -> Any: ...

    def proxy_tell(self, actor: ActorAddress, actor_type: type[Any] | None = None) -> Any:
        """A proxy on ``actor`` whose method calls are sent without waiting."""
        ...
