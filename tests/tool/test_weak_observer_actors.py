"""On real actors: tools, registries and updaters never keep a stopped agent alive."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pykka
import pytest

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core.agent import Akgent
from akgentic.testing.waiting import poll_until
from akgentic.tool import (
    COMMAND,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    CommandRegistry,
    ContextUpdater,
    ToolCard,
    ToolFactory,
    ToolObserverGone,
)

BOUND = 10.0


class Ping(BaseToolParam):
    """Report which agent owns the card."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class PingTool(ToolCard):
    """Its tool and command read the owner through the weak accessor on every call."""

    ping: Ping | bool = True

    def _owner_name(self) -> str:
        observer: Any = self._observer  # raises ToolObserverGone once the agent is gone
        return str(observer.config.name)

    def get_tools(self) -> list[Callable[..., Any]]:
        def ping() -> str:
            """Say who answers."""
            return f"pong from {self._owner_name()}"

        return [ping]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        def whoami() -> str:
            """Name the owning agent."""
            return self._owner_name()

        return {Ping: whoami}


class CardCarrier(Akgent[BaseConfig, BaseState]):
    """An agent wiring one card the way the agent layer does."""

    def on_start(self) -> None:
        self.factory = ToolFactory([PingTool()], observer=self)
        self.tools = self.factory.get_tools()
        self.registry = self.factory.get_command_registry()
        self.updater = self.factory.get_context_updater()

    def wiring(self) -> tuple[ToolCard, list[Callable[..., Any]], CommandRegistry, ContextUpdater]:
        return self.factory.tool_cards[0], self.tools, self.registry, self.updater

    def myself(self) -> weakref.ReferenceType[CardCarrier]:
        return weakref.ref(self)


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    yield
    pykka.ActorRegistry.stop_all(block=True, timeout=BOUND)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=5)


def _collected(ref: weakref.ReferenceType[Any]) -> bool:
    def gone() -> bool:
        gc.collect()
        return ref() is None

    return poll_until(gone, BOUND, interval=0.01)


def test_a_live_agent_serves_its_tools_and_commands(system: ActorSystem) -> None:
    address = system.createActor(CardCarrier, config=BaseConfig(name="@Pinger"))
    _card, tools, registry, _updater = system.proxy_ask(address, CardCarrier).wiring()
    assert tools[0]() == "pong from @Pinger"
    assert registry.dispatch("/whoami") == "@Pinger"


def test_a_stopped_agent_is_collected_while_its_wiring_is_still_held(
    system: ActorSystem,
) -> None:
    address = system.createActor(CardCarrier, config=BaseConfig(name="@Pinger"))
    proxy = system.proxy_ask(address, CardCarrier, timeout=BOUND)
    card, tools, registry, updater = proxy.wiring()
    agent_ref = proxy.myself()
    del proxy
    system.proxy_ask(address, CardCarrier, timeout=BOUND).stop()
    assert _collected(agent_ref), "a card, tool, registry or updater pinned the stopped agent"
    with pytest.raises(ToolObserverGone):
        tools[0]()
    with pytest.raises(ToolObserverGone):
        updater.compose_update([])
    assert card._observer_or_none() is None
    assert registry.dispatch("/whoami") == (
        "Command 'whoami' failed: ToolObserverGone: "
        "the agent that owned this PingTool has been stopped"
    )
