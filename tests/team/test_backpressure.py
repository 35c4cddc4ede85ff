"""Backpressure: `TeamRuntime.send` waits while the store cannot keep up; the lag stays bounded."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import ActorSystem, EventSubscriber
from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team import (
    PersistedEvent,
    PersistenceSubscriber,
    SqliteEventStore,
    TeamCard,
    TeamManager,
)
from akgentic.team.backpressure import BackpressureTimeoutError, SendGate


class HeldStore(SqliteEventStore):
    """A real SQLite store whose batch writes wait until the test lets them through."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.release = threading.Event()
        self.release.set()
        self.holding = threading.Event()
        self.batches = 0

    def save_events(self, events: Sequence[PersistedEvent], *, epoch: int | None = None) -> None:
        if not self.release.is_set():
            self.holding.set()  # a batch is now stuck in flight
        if not self.release.wait(30):
            raise TimeoutError("the test never released the store")
        self.batches += 1
        super().save_events(events, epoch=epoch)


@pytest.fixture
def held_store(tmp_path: Path) -> Iterator[HeldStore]:
    store = HeldStore(tmp_path / "held.db")
    yield store
    store.release.set()
    store.close()


def test_send_waits_while_the_store_is_stuck_and_resumes_when_it_catches_up(
    actor_system: ActorSystem,
    held_store: HeldStore,
    team_card: Callable[..., TeamCard],
    wait_for: Callable[..., None],
) -> None:
    manager = TeamManager(actor_system, held_store, max_backlog=40)
    runtime = manager.create_team(team_card())
    persistence = manager.get_persistence(runtime.id)
    gate = runtime.gate
    assert persistence is not None and isinstance(gate, SendGate)
    persistence.flush(30)
    held_store.release.clear()
    sent: list[int] = []

    def producer() -> None:
        for i in range(300):
            runtime.send(f"m{i}")
            sent.append(i)

    thread = threading.Thread(target=producer, daemon=True)
    thread.start()
    # The producer gets ahead by one batch in flight (held in the store) plus about
    # max_backlog records queued behind it, then waits for the store.
    wait_for(lambda: held_store.holding.is_set() and gate.queued > 40)
    stalled = len(sent)
    assert thread.is_alive() and stalled < 300
    assert not threading.Event().wait(0.3) and len(sent) <= stalled + 1
    held_store.release.set()
    thread.join(60)
    assert not thread.is_alive() and len(sent) == 300
    assert runtime.wait_idle(60)
    persistence.flush(60)
    stored = held_store.load_events(runtime.id)
    contents = [getattr(e.event, "message", None) for e in stored]
    assert sum(1 for m in contents if getattr(m, "content", "").startswith("m")) >= 300
    manager.stop_all()


def test_the_batch_in_flight_is_not_counted_so_the_next_one_fills_meanwhile(
    held_store: HeldStore, wait_for: Callable[..., None]
) -> None:
    team_id = uuid4()
    sender = ActorAddressProxy(
        {"agent_id": str(uuid4()), "name": "@W", "role": "W", "team_id": str(team_id)}
    )
    persistence = PersistenceSubscriber(team_id, held_store)
    held_store.release.clear()
    persistence.on_message(UserMessage(content="first").init(sender, team_id))
    wait_for(held_store.holding.is_set)  # the writer has taken it and is stuck
    for i in range(5):
        persistence.on_message(UserMessage(content=f"m{i}").init(sender, team_id))
    assert (persistence.backlog, persistence.queued) == (6, 5)
    assert not persistence.wait_for_queue(2, lambda: 0, timeout=0.2)
    assert not persistence.wait_for_queue(5, lambda: 1, timeout=0.2)  # upstream counts
    held_store.release.set()
    assert persistence.wait_for_queue(0, lambda: 0, timeout=30)  # taken as the next batch
    persistence.flush(30)
    assert (persistence.backlog, persistence.queued) == (0, 0)
    assert [e.sequence for e in held_store.load_events(team_id)] == list(range(1, 7))
    persistence.close()


def test_a_store_that_never_catches_up_makes_send_raise_instead_of_queueing_forever(
    actor_system: ActorSystem,
    held_store: HeldStore,
    team_card: Callable[..., TeamCard],
) -> None:
    manager = TeamManager(actor_system, held_store, max_backlog=10)
    runtime = manager.create_team(team_card())
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None and runtime.gate is not None
    persistence.flush(30)
    runtime.gate.timeout = 0.5
    held_store.release.clear()
    with pytest.raises(BackpressureTimeoutError, match="not caught up"):
        for i in range(500):
            runtime.send(f"m{i}")
    held_store.release.set()
    manager.stop_all()


def test_under_sustained_load_the_backlog_never_exceeds_the_gate(
    actor_system: ActorSystem,
    tmp_path: Path,
    team_card: Callable[..., TeamCard],
    member: Callable[..., dict[str, Any]],
) -> None:
    store = SqliteEventStore(tmp_path / "load.db")
    manager = TeamManager(actor_system, store, max_backlog=64)
    # A member that keeps up, so what queues is the record, not the member's own mail.
    runtime = manager.create_team(team_card(members=[member("Quiet", "@Quiet")]))
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None and runtime.gate is not None
    gate = runtime.gate
    peaks: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.002):
            peaks.append(persistence.backlog)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    for i in range(1500):
        runtime.send(f"m{i}")
    done.set()
    sampler.join(10)
    assert runtime.wait_idle(60)
    persistence.flush(60)
    # The gate counts envelopes upstream, and one (a send, or a telemetry batch) turns
    # into up to three events: the queue stays within three times the bound, plus the
    # message admitted last, and the batch in flight is at most one such queue. The
    # member's own inbox is not counted (on a loaded machine it can hold up to about
    # one more queue's worth of events still to come). Without the gate the
    # unacknowledged events reach the thousands.
    queue = 3 * gate.max_backlog + 6
    assert peaks and max(peaks) <= 3 * queue, max(peaks)
    assert persistence.backlog == 0
    manager.stop_all()
    store.close()


class AdmitsOnTheOrchestratorThread(EventSubscriber):
    """Calls the team's gate from inside the orchestrator, as a sending subscriber would."""

    def __init__(self) -> None:
        self.gate: SendGate | None = None
        self.outcomes: list[BaseException | None] = []
        self.done = threading.Event()

    def on_message(self, msg: Message) -> None:
        gate = self.gate
        if gate is None or not isinstance(msg, SentMessage) or self.done.is_set():
            return
        if getattr(msg.message, "content", "") != "trigger":
            return
        gate.max_backlog = 1  # from here on, any other thread would be held
        try:
            gate.admit()
            self.outcomes.append(None)
        except BaseException as exc:  # reported through the assertion below
            self.outcomes.append(exc)
        self.done.set()


def test_a_send_from_the_orchestrator_thread_is_never_held(
    actor_system: ActorSystem,
    held_store: HeldStore,
    team_card: Callable[..., TeamCard],
) -> None:
    # Waiting there would wait on itself: the orchestrator drains the backlog.
    subscriber = AdmitsOnTheOrchestratorThread()
    manager = TeamManager(actor_system, held_store, subscribers=[subscriber])
    runtime = manager.create_team(team_card())
    gate = runtime.gate
    assert gate is not None
    gate.timeout = 0.2
    held_store.release.clear()
    subscriber.gate = gate
    runtime.send("fill")
    runtime.send("up")
    runtime.send("trigger")
    assert subscriber.done.wait(30)
    assert gate.backlog > gate.max_backlog  # the gate would hold any other thread
    assert subscriber.outcomes == [None]
    held_store.release.set()
    manager.stop_all()
