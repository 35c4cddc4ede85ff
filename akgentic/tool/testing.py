"""Test doubles for card authors: an observer that records what a card does.

Use :class:`RecordingObserver` to unit-test a card without starting actors::

    observer = RecordingObserver()
    factory = ToolFactory([MyCard()], observer=observer)
    factory.get_tools()[0]("input")
    assert observer.events == [...]

It satisfies :class:`~akgentic.tool.core.observer.ActorToolObserver`. Its address is a
snapshot that cannot deliver messages and its proxies raise, so cards that reach other
actors need a real actor test.

Remember that cards and factories hold their observer weakly: keep the observer in a
variable for as long as the card is used.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.tool.core.state import ToolState

__all__ = ["RecordingObserver", "ToolStateHolder"]


class ToolStateHolder:
    """The smallest agent state: it carries a :class:`ToolState` and nothing else."""

    def __init__(self, tool_state: ToolState | None = None) -> None:
        self.tool_state = tool_state if tool_state is not None else ToolState()


class RecordingObserver:
    """An in-memory observer: records events, holds a tool state, reaches no actor.

    Attributes:
        events: Every object passed to :meth:`notify_event`, in order.
        state: The state carrier; replace it to simulate a restored agent.
    """

    def __init__(
        self, *, name: str = "@recording", team_id: UUID | None = None, user_id: str | None = None
    ) -> None:
        self.events: list[object] = []
        self.state = ToolStateHolder()
        self._team_id = team_id = team_id or uuid4()
        self._user_id = user_id
        self._address = ActorAddressProxy(
            {"agent_id": str(uuid4()), "name": name, "role": "Tester", "team_id": str(team_id)}
        )

    def notify_event(self, event: object) -> None:
        """Record ``event``."""
        self.events.append(event)

    @property
    def myAddress(self) -> ActorAddress:
        """A snapshot address (it cannot send)."""
        return self._address

    @property
    def orchestrator(self) -> ActorAddress | None:
        """Always None: the observer belongs to no team."""
        return None

    @property
    def team_id(self) -> UUID:
        """A fixed id chosen at construction."""
        return self._team_id

    @property
    def user_id(self) -> str | None:
        """The id given at construction."""
        return self._user_id

    def proxy_ask(self, actor: Any, actor_type: Any = None, timeout: float | None = None) -> Any:
        """Not available outside an actor system."""
        raise RuntimeError("RecordingObserver cannot reach actors; use a real actor test")

    def proxy_tell(self, actor: Any, actor_type: Any = None) -> Any:
        """Not available outside an actor system."""
        raise RuntimeError("RecordingObserver cannot reach actors; use a real actor test")
