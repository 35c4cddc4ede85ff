"""A real team for testing cards that own a tool actor: an actor system and an orchestrator.

Cards such as planning and the knowledge graph create their ``#``-named actor under the
orchestrator of the agent they are bound to; :class:`TeamObserver` is the contract
kit's agent stand-in with such an orchestrator, and :class:`ToolTeam` makes them.

:class:`ToolStateRecorder` collects one tool's state events (subscribe it to the
orchestrator), and :class:`TeamToolCardContract` runs the card contract with the
stand-in in a live team.

Example (a plugin's ``conftest.py``)::

    @pytest.fixture
    def team() -> Iterator[ToolTeam]:
        made = ToolTeam()
        yield made
        made.shutdown()
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import pytest

from akgentic.core import ActorSystem, BaseConfig, EventSubscriber, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.testing.tool_card_contract import ContractObserver, ToolCardContract
from akgentic.tool.core.event import ToolStateEvent
from akgentic.tool.core.observer import ToolObserver

__all__ = ["TeamObserver", "TeamToolCardContract", "ToolStateRecorder", "ToolTeam"]

P = TypeVar("P")


class TeamObserver(ContractObserver):
    """The kit's agent stand-in, but a member of a real team: it has an orchestrator."""

    def __init__(self, orchestrator: ActorAddress, *, name: str = "@contract") -> None:
        super().__init__(name=name)
        self._orchestrator_address = orchestrator

    @property
    def orchestrator(self) -> ActorAddress | None:
        """The live orchestrator of the test team."""
        return self._orchestrator_address

    def proxy_ask(self, actor: Any, actor_type: Any = None, timeout: float | None = None) -> Any:
        """A blocking proxy to ``actor``, as an agent's own would be."""
        return ProxyWrapper(actor, timeout=timeout or 30.0)


class ToolTeam:
    """An actor system with one orchestrator; ``observer(name)`` makes members."""

    def __init__(self) -> None:
        self.system = ActorSystem()
        self.orchestrator = self.system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        self.proxy: Any = self.system.proxy_ask(self.orchestrator, Orchestrator)
        self.kept: list[TeamObserver] = []

    def observer(self, name: str) -> TeamObserver:
        """A member stand-in named ``name`` (kept alive by the team)."""
        member = TeamObserver(self.orchestrator, name=name)
        self.kept.append(member)
        return member

    def member(self, name: str) -> ActorAddress | None:
        """The team member called ``name``."""
        found: ActorAddress | None = self.proxy.get_team_member(name)
        return found

    def shutdown(self) -> None:
        """Stop every actor of the team."""
        self.system.shutdown(timeout=10)


class ToolStateRecorder(EventSubscriber, Generic[P]):
    """The state events of ``tool_id`` an orchestrator published, in order (thread-safe)."""

    def __init__(self, tool_id: str, payload_type: type[P]) -> None:
        self.tool_id = tool_id
        self.payload_type = payload_type
        self.seen: list[ToolStateEvent] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        """Keep ``msg`` when it carries a state event of the tool."""
        event = msg.event if isinstance(msg, EventMessage) else None
        if isinstance(event, ToolStateEvent) and event.tool_id == self.tool_id:
            with self._lock:
                self.seen.append(event)

    def payloads(self) -> list[P]:
        """The payloads of the events seen so far that have the expected type."""
        with self._lock:
            return [e.payload for e in self.seen if isinstance(e.payload, self.payload_type)]


class TeamToolCardContract(ToolCardContract):
    """:class:`ToolCardContract` for a card that needs an orchestrator (a tool actor's card).

    Each test gets a live actor system with an orchestrator, and the kit's stand-in
    becomes a :class:`TeamObserver` of it.
    """

    @pytest.fixture(autouse=True)
    def _team_system(self) -> Iterator[None]:
        system = ActorSystem()
        self._orchestrator: ActorAddress = system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        yield
        system.shutdown(timeout=10)

    def make_observer(self) -> ToolObserver:
        """A member stand-in of the live team."""
        return TeamObserver(self._orchestrator)
