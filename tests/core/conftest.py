"""Shared fixtures for the actor-runtime tests: real pykka actors, bounded waits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pykka
import pytest

from akgentic.core import ActorSystem, BaseConfig, EventSubscriber, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.testing.waiting import wait_until

WaitUntil = Callable[..., None]


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    yield
    pykka.ActorRegistry.stop_all(block=True, timeout=10)


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> WaitUntil:
    """``wait_until(predicate, timeout=10.0)``: poll until true or fail the test."""
    return wait_until


class Recorder(EventSubscriber):
    """Subscriber recording everything it is given, thread-safe."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.hooks: list[tuple[str, Any]] = []
        self.timeline: list[str] = []
        self.stopped = threading.Event()
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        with self._lock:
            self.messages.append(msg)
            self.timeline.append(type(msg).__name__)

    def on_stop_request(self, team_id: Any) -> None:
        with self._lock:
            self.hooks.append(("on_stop_request", team_id))
            self.timeline.append("on_stop_request")

    def on_stop(self, team_id: Any) -> None:
        with self._lock:
            self.hooks.append(("on_stop", team_id))
            self.timeline.append("on_stop")
        self.stopped.set()

    def of_type(self, cls: type[Message]) -> list[Any]:
        with self._lock:
            return [m for m in self.messages if isinstance(m, cls)]

    def names(self) -> list[str]:
        with self._lock:
            return [type(m).__name__ for m in self.messages]


@pytest.fixture
def recorder_cls() -> type[Recorder]:
    """The recording subscriber class (fixtures are how tests share helpers)."""
    return Recorder


@pytest.fixture
def recorder() -> Recorder:
    """A fresh recording subscriber."""
    return Recorder()


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    """An ActorSystem shut down after the test."""
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=5)


class Team:
    """An orchestrator with a recorder attached."""

    def __init__(self, system: ActorSystem, recorder: Recorder) -> None:
        self.system = system
        self.recorder = recorder
        self.address: ActorAddress = system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        self.orchestrator: Orchestrator = system.proxy_ask(self.address, Orchestrator, timeout=10)
        self.orchestrator.subscribe(recorder)

    def spawn(self, cls: type[Any], name: str, role: str = "Worker", **kw: Any) -> ActorAddress:
        address: ActorAddress = self.orchestrator.createActor(
            cls, config=BaseConfig(name=name, role=role), **kw
        )
        return address


@pytest.fixture
def team(system: ActorSystem, recorder: Recorder) -> Team:
    """A running orchestrator with ``recorder`` subscribed."""
    return Team(system, recorder)
