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
    runtime.send("first")
    # The store is stuck with a batch before the producer starts: from here on the
    # writer can take nothing more, so once the gate holds the producer, nothing but
    # the release lets it out (no race with a take already under way).
    wait_for(held_store.holding.is_set, timeout=60)
    sent: list[int] = []

    def producer() -> None:
        for i in range(300):
            runtime.send(f"m{i}")
            sent.append(i)

    thread = threading.Thread(target=producer, daemon=True)
    thread.start()
    # The producer gets ahead by about max_backlog records queued behind the stuck
    # batch, then waits in the gate.
    wait_for(lambda: gate.held == 1, timeout=60)
    stalled = len(sent)
    assert thread.is_alive() and stalled < 300
    assert gate.queued > gate.max_backlog // 2 and gate.held == 1 and len(sent) == stalled
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


def test_admission_counts_envelopes_that_move_into_the_queue_while_it_looks(
    held_store: HeldStore,
) -> None:
    """An envelope recorded between the gate's two reads is counted once, not missed.

    ``upstream`` here stands for the orchestrator's inbox; when the gate reads it,
    the six envelopes it held are recorded into the writer's queue first (what the
    orchestrator's thread does meanwhile on a busy machine). The true count is
    5 + 6 = 11, above the bound of 10, so the sender must be held.
    """
    team_id = uuid4()
    sender = ActorAddressProxy(
        {"agent_id": str(uuid4()), "name": "@W", "role": "W", "team_id": str(team_id)}
    )
    persistence = PersistenceSubscriber(team_id, held_store)
    held_store.release.clear()
    persistence.on_message(UserMessage(content="in flight").init(sender, team_id))
    assert held_store.holding.wait(30)  # the writer is stuck with it
    for i in range(5):
        persistence.on_message(UserMessage(content=f"q{i}").init(sender, team_id))
    inbox = [UserMessage(content=f"u{i}").init(sender, team_id) for i in range(6)]

    def upstream() -> int:
        while inbox:
            persistence.on_message(inbox.pop(0))
        return len(inbox)

    gate = SendGate(persistence, upstream, max_backlog=10, timeout=0.2)
    with pytest.raises(BackpressureTimeoutError):
        gate.admit()
    assert gate.queued == 11 and gate.held == 0
    held_store.release.set()
    persistence.close()


class PeakStore(SqliteEventStore):
    """A real SQLite store that records the backlog at the end of every batch write.

    Between two acknowledgements the backlog only grows (events are numbered, none
    is acknowledged), so its peak over a run is its value just before an
    acknowledgement: at the end of a batch write, before the writer records it.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.persistence: PersistenceSubscriber | None = None
        self.peak = 0
        self.largest_batch = 0

    def save_events(self, events: Sequence[PersistedEvent], *, epoch: int | None = None) -> None:
        super().save_events(events, epoch=epoch)
        self.largest_batch = max(self.largest_batch, len(events))
        if self.persistence is not None:
            self.peak = max(self.peak, self.persistence.backlog)


def test_under_sustained_load_the_backlog_never_exceeds_the_gate(
    actor_system: ActorSystem, tmp_path: Path, team_card: Callable[..., TeamCard]
) -> None:
    """The exact bound of the gate's logic, on a path it counts end to end.

    ``emitMessage`` passes the gate and becomes one envelope in the orchestrator's
    inbox, recorded as one event; no member acts on it, so nothing outside the
    gate's count adds events. With one sender, ``upstream + queued`` grows only by
    an admission, which happens at most at ``max_backlog``: it stays within
    ``max_backlog + 1``, plus the one envelope the orchestrator may hold between
    its inbox and the writer's queue (counted by neither). The batch in flight was
    such a queue, so the backlog stays within twice ``max_backlog + 2`` whatever
    the machine's load. Without the gate it reaches the thousands.
    """
    store = PeakStore(tmp_path / "load.db")
    # No periodic checkpoints: the count below is of the emitted events alone.
    manager = TeamManager(actor_system, store, max_backlog=64, checkpoint_every=0)
    runtime = manager.create_team(team_card())
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None and runtime.gate is not None
    persistence.flush(30)
    store.persistence = persistence
    start = persistence.sequence
    for i in range(3000):
        runtime.emitMessage(UserMessage(content=f"m{i}"))
    persistence.flush(60)
    assert persistence.sequence - start == 3000 and persistence.backlog == 0
    queue = runtime.gate.max_backlog + 2
    assert store.largest_batch <= queue and store.peak <= 2 * queue, (
        store.largest_batch,
        store.peak,
    )
    manager.stop_all()
    store.close()


def test_under_sustained_load_into_a_member_everything_is_stored(
    actor_system: ActorSystem,
    tmp_path: Path,
    team_card: Callable[..., TeamCard],
    member: Callable[..., dict[str, Any]],
) -> None:
    # A member's inbox is not counted by the gate (a slow member delays its own
    # work), so the events its turns add are outside the gate's bound: this checks
    # that every message's events (sent, received, processed) reach the store.
    store = SqliteEventStore(tmp_path / "load.db")
    manager = TeamManager(actor_system, store, max_backlog=64)
    runtime = manager.create_team(team_card(members=[member("Quiet", "@Quiet")]))
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None and runtime.gate is not None
    for i in range(1500):
        runtime.send(f"m{i}")
    assert runtime.wait_idle(60)
    persistence.flush(60)
    assert persistence.backlog == 0
    stored = [getattr(e.event, "message", None) for e in store.load_events(runtime.id)]
    sent = [m for m in stored if getattr(m, "content", "").startswith("m")]
    assert len(sent) >= 1500
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
