"""RuntimeContract: the behaviour every runtime (``local``, ``nats``...) must show.

Subclass it in a runtime's tests and provide three class-scoped fixtures:

* ``runtime`` — a :class:`~akgentic.cluster.client.RuntimeClient`;
* ``log_store`` — an :class:`~akgentic.team.store.EventStore` open on the store
  the runtime writes (the tests read the logs there to check what was acknowledged);
* ``fleet`` — a :class:`Fleet` of worker processes, or ``None`` for a runtime
  that runs in one process (the failover, drain and split-brain tests then skip).

The single-process tests: acknowledgements carry durable sequences, one
delivery per idempotency key (across a stop and resume too), activation on
demand, replay-then-follow, listing with filters, resume, delete, an unknown
team refused by every lifecycle call, and no acknowledged request lost. The fleet
tests kill (SIGKILL), drain (SIGTERM) and freeze (SIGSTOP) a worker holding
teams and check that each of its teams answers again on another worker within
``answer_timeout`` (a bound, not a speed target), that every acknowledged
request is in the log, and that a frozen worker acknowledges nothing once it
wakes. Speed targets belong to ``bench/cluster.py``.

The evidence is what the *client* received: every acknowledgement of the fleet
tests goes into an :class:`AckLedger` (team, sequence, key, worker, epoch and
when it arrived), which :meth:`AckLedger.problems` checks against the stored
log: each acknowledged key at its sequence, one worker per epoch of a team,
epochs never going back as the log grows, no key at two sequences. No worker's
own account of what it acknowledged is trusted.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID, uuid4

import pytest

from akgentic.cluster.client import Ack, RuntimeClient
from akgentic.cluster.keys import inbound_id
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team.errors import TeamNotFoundError
from akgentic.team.models import TeamStatus
from akgentic.team.store import EventStore
from akgentic.testing.cluster_team import QuietMetadata, quiet_team_card
from akgentic.testing.waiting import wait_until

__all__ = [
    "AckLedger",
    "Fleet",
    "FleetRuntimeContract",
    "ReceivedAck",
    "RuntimeContract",
    "check_acks_in_log",
    "store_at",
]

_keys = itertools.count()


class Fleet(Protocol):
    """Worker processes of a runtime, driven by the contract's fleet tests."""

    def names(self) -> list[str]:
        """The workers running now (not killed, drained or paused)."""
        ...

    def ensure(self, count: int) -> None:
        """Start workers until ``count`` run and are ready."""
        ...

    def kill(self, name: str) -> None:
        """SIGKILL the worker."""
        ...

    def drain(self, name: str) -> None:
        """SIGTERM the worker and wait until it exited."""
        ...

    def pause(self, name: str) -> None:
        """SIGSTOP the worker."""
        ...

    def wake(self, name: str) -> None:
        """SIGCONT a paused worker."""
        ...


def check_acks_in_log(store: EventStore, acks: list[Ack]) -> list[Ack]:
    """The acknowledged requests whose message is not in the log at their sequence."""
    missing: list[Ack] = []
    logs: dict[UUID, dict[int, object]] = {}
    for ack in acks:
        if ack.team_id not in logs:
            logs[ack.team_id] = {e.sequence: e.event for e in store.load_events(ack.team_id)}
        event = logs[ack.team_id].get(ack.sequence)
        if not (
            isinstance(event, SentMessage) and event.message.id == inbound_id(ack.team_id, ack.key)
        ):
            missing.append(ack)
    return missing


@dataclass(frozen=True)
class ReceivedAck:
    """One acknowledgement and when (``time.monotonic()``) the client received it."""

    ack: Ack
    at: float


class AckLedger:
    """The acknowledgements a client received, to be checked against the log (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[ReceivedAck] = []

    def record(self, ack: Ack) -> Ack:
        """Note ``ack`` as received now; returns it."""
        with self._lock:
            self._entries.append(ReceivedAck(ack, time.monotonic()))
        return ack

    def send(
        self,
        runtime: RuntimeClient,
        team_id: UUID,
        content: str,
        *,
        key: str | None = None,
        timeout: float = 60.0,
    ) -> Ack:
        """``runtime.send`` and record what came back."""
        return self.record(runtime.send(team_id, content, key=key, timeout=timeout))

    @property
    def acks(self) -> list[Ack]:
        """Every acknowledgement received so far, in arrival order."""
        with self._lock:
            return [entry.ack for entry in self._entries]

    def from_worker(self, worker: str, *, since: float = 0.0) -> list[Ack]:
        """Acknowledgements ``worker`` gave that arrived at or after ``since``."""
        with self._lock:
            return [e.ack for e in self._entries if e.ack.worker == worker and e.at >= since]

    def problems(self, store: EventStore) -> list[str]:
        """What the stored logs contradict in the received acknowledgements (empty: none)."""
        acks = self.acks
        found = [
            f"team {a.team_id}: key {a.key!r} acknowledged at {a.sequence} is not there"
            for a in check_acks_in_log(store, acks)
        ]
        by_team: dict[UUID, list[Ack]] = {}
        for ack in acks:
            by_team.setdefault(ack.team_id, []).append(ack)
        for team_id, team_acks in by_team.items():
            found += _team_problems(store, team_id, team_acks)
        return found


def _team_problems(store: EventStore, team_id: UUID, acks: list[Ack]) -> list[str]:
    found: list[str] = []
    sequences: dict[str, set[int]] = {}
    workers: dict[int, set[str]] = {}
    for ack in acks:
        sequences.setdefault(ack.key, set()).add(ack.sequence)
        if ack.epoch is not None:
            workers.setdefault(ack.epoch, set()).add(ack.worker)
    found += [
        f"team {team_id}: key {key!r} acknowledged at sequences {sorted(seen)}"
        for key, seen in sequences.items()
        if len(seen) > 1
    ]
    found += [
        f"team {team_id}: epoch {epoch} acknowledged by {sorted(names)}"
        for epoch, names in workers.items()
        if len(names) > 1
    ]
    # A first delivery is written by the worker that acknowledges it, under its epoch: a
    # later sequence under an older epoch is a write of an owner that had been fenced.
    firsts = sorted((a for a in acks if not a.duplicate and a.epoch is not None), key=_sequence)
    highest: Ack | None = None
    for ack in firsts:
        if highest is not None and (ack.epoch or 0) < (highest.epoch or 0):
            found.append(
                f"team {team_id}: sequence {ack.sequence} acknowledged by {ack.worker} under "
                f"epoch {ack.epoch} after sequence {highest.sequence} under epoch {highest.epoch}"
            )
        if highest is None or (ack.epoch or 0) > (highest.epoch or 0):
            highest = ack
    record = store.load_team(team_id)
    newest = max((a.epoch for a in acks if a.epoch is not None), default=None)
    if record is not None and newest is not None and record.epoch < newest:
        found.append(f"team {team_id}: acknowledged under epoch {newest}, stored {record.epoch}")
    return found


def _sequence(ack: Ack) -> int:
    return ack.sequence


def _key() -> str:
    return f"contract-{next(_keys)}"


class RuntimeContract:
    """The runtime contract (see the module docstring)."""

    #: Teams each worker holds in the fleet tests.
    teams_per_worker = 30
    #: Workers of the fleet tests.
    workers = 3
    #: Longest wait for a team to answer again (generous: shared, loaded machines).
    answer_timeout = 60.0

    @pytest.fixture(scope="class")
    @classmethod
    def runtime(cls) -> RuntimeClient:
        """The client under test (override)."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls) -> EventStore:
        """The store the runtime writes (override)."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def fleet(cls) -> Fleet | None:
        """The workers, or ``None`` for an in-process runtime."""
        return None

    @pytest.fixture(scope="class")
    @classmethod
    def team(cls, runtime: RuntimeClient) -> UUID:
        """One team for the single-process tests."""
        return runtime.create(quiet_team_card())

    @pytest.fixture(scope="class")
    @classmethod
    def ledger(cls, log_store: EventStore) -> AckLedger:
        """Every acknowledgement the fleet tests receive (checked cumulatively).

        Tied to ``log_store`` so a parametrized store gets a fresh ledger with it.
        """
        del log_store
        return AckLedger()

    @pytest.fixture(scope="class")
    @classmethod
    def fleet_teams(cls, runtime: RuntimeClient, fleet: Fleet | None) -> Iterator[list[UUID]]:
        """``workers x teams_per_worker`` teams spread over the fleet."""
        if fleet is None:
            pytest.skip("this runtime runs in one process: no fleet to fail over")
        fleet.ensure(cls.workers)
        count = cls.workers * cls.teams_per_worker
        created: list[UUID] = []
        lock = threading.Lock()

        def make() -> None:
            team_id = runtime.create(quiet_team_card())
            with lock:
                created.append(team_id)

        threads = [threading.Thread(target=make) for _ in range(count)]
        for chunk in range(0, count, 16):
            batch = threads[chunk : chunk + 16]
            for thread in batch:
                thread.start()
            for thread in batch:
                thread.join(cls.answer_timeout * 2)
        assert len(created) == count
        yield created

    # -- single process -----------------------------------------------------
    def test_send_is_acknowledged_with_a_durable_sequence(
        self, runtime: RuntimeClient, log_store: EventStore, team: UUID
    ) -> None:
        ack = runtime.send(team, "hello", key=_key())
        assert ack.team_id == team and ack.sequence > 0 and ack.worker and not ack.duplicate
        assert check_acks_in_log(log_store, [ack]) == []

    def test_a_key_is_delivered_once(
        self, runtime: RuntimeClient, log_store: EventStore, team: UUID
    ) -> None:
        key = _key()
        first = runtime.send(team, "once", key=key)
        again = runtime.send(team, "once", key=key)
        assert again.duplicate and again.sequence == first.sequence
        sent = [
            e
            for e in log_store.load_events(team)
            if isinstance(e.event, SentMessage) and e.event.message.id == inbound_id(team, key)
        ]
        assert {e.sequence for e in sent} == {first.sequence}

    def test_a_message_to_a_stopped_team_places_it_again_and_keys_survive(
        self, runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = runtime.create(quiet_team_card())
        key = _key()
        first = runtime.send(team_id, "before the stop", key=key)
        runtime.stop(team_id)
        assert runtime.where(team_id).worker is None
        retried = runtime.send(team_id, "before the stop", key=key)
        assert retried.duplicate and retried.sequence == first.sequence
        fresh = runtime.send(team_id, "after the stop", key=_key())
        assert not fresh.duplicate and fresh.sequence > first.sequence
        assert runtime.where(team_id).worker == fresh.worker
        assert check_acks_in_log(log_store, [first, fresh]) == []

    def test_events_replay_from_a_sequence_then_follow_live(
        self, runtime: RuntimeClient, team: UUID
    ) -> None:
        ack = runtime.send(team, "replayed", key=_key())
        stream = runtime.events(team, from_sequence=ack.sequence, follow=True, idle_timeout=30)
        first = next(stream)
        assert first.sequence == ack.sequence
        assert isinstance(first.event, SentMessage)
        live = runtime.send(team, "live", key=_key())
        seen = [first.sequence]
        for event in stream:
            seen.append(event.sequence)
            if event.sequence >= live.sequence:
                break
        stream.close()
        assert seen == sorted(set(seen)) and live.sequence in seen

    def test_delete_removes_the_team(self, runtime: RuntimeClient, log_store: EventStore) -> None:
        team_id = runtime.create(quiet_team_card())
        runtime.send(team_id, "doomed", key=_key())
        runtime.delete(team_id)
        assert log_store.load_team(team_id) is None
        with pytest.raises(TeamNotFoundError):
            runtime.send(team_id, "anyone?", key=_key(), timeout=20)

    def test_list_teams_filters_by_status_user_and_metadata_like_the_store(
        self, runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        tenant = f"tenant-{uuid4().hex[:8]}"
        user = f"user-{uuid4().hex[:8]}"
        card = quiet_team_card("listed-team")
        kept = runtime.create(
            card, user_id=user, metadata=QuietMetadata(tenant=tenant, note="kept")
        )
        stopped = runtime.create(card, user_id=user, metadata=QuietMetadata(tenant=tenant))
        runtime.stop(stopped)
        listed = runtime.list_teams(metadata={"tenant": tenant})
        assert [s.team_id for s in listed] == [kept, stopped]
        first = listed[0]
        record = log_store.load_team(kept)
        assert record is not None
        assert (first.name, first.user_id, first.status) == ("listed-team", user, "running")
        assert first.metadata == {"tenant": tenant, "note": "kept"}
        assert first.metadata_indexes == record.metadata_indexes
        assert first.created_at == record.created_at
        running = runtime.list_teams(metadata={"tenant": tenant}, status=TeamStatus.RUNNING)
        assert [s.team_id for s in running] == [kept]
        assert [s.team_id for s in runtime.list_teams(user_id=user)] == [kept, stopped]
        assert runtime.list_teams(metadata={"tenant": f"{tenant}|x"}) == []

    def test_a_stopped_team_is_resumed_where_the_runtime_places_it(
        self, runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = runtime.create(quiet_team_card())
        first = runtime.send(team_id, "before", key=_key())
        runtime.stop(team_id)
        stopped = runtime.where(team_id)
        assert (stopped.worker, stopped.status) == (None, "stopped")
        placement = runtime.resume(team_id)
        assert placement.worker is not None and placement.status == "running"
        record = log_store.load_team(team_id)
        assert record is not None and record.status == TeamStatus.RUNNING
        again = runtime.send(team_id, "before", key=first.key)
        assert again.duplicate and again.sequence == first.sequence

    def test_an_unknown_team_is_refused_by_every_lifecycle_call(
        self, runtime: RuntimeClient
    ) -> None:
        unknown = uuid4()
        with pytest.raises(TeamNotFoundError):
            runtime.where(unknown)
        with pytest.raises(TeamNotFoundError):
            runtime.stop(unknown)
        with pytest.raises(TeamNotFoundError):
            runtime.resume(unknown)
        with pytest.raises(TeamNotFoundError):
            runtime.delete(unknown)

    def test_no_acknowledged_request_is_lost(
        self, runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        teams = [runtime.create(quiet_team_card()) for _ in range(3)]
        acks: list[Ack] = []
        lock = threading.Lock()

        def client(team_id: UUID) -> None:
            for _ in range(10):
                ack = runtime.send(team_id, "counted", key=_key())
                with lock:
                    acks.append(ack)

        threads = [threading.Thread(target=client, args=(t,)) for t in teams for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.answer_timeout * 2)
        assert len(acks) == 60
        assert check_acks_in_log(log_store, acks) == []
        for team_id in teams:
            sequences = [e.sequence for e in log_store.load_events(team_id)]
            assert sequences == list(range(1, len(sequences) + 1))

    # -- fleet --------------------------------------------------------------
    def _teams_of(self, runtime: RuntimeClient, teams: list[UUID], worker: str) -> list[UUID]:
        return [t for t in teams if runtime.where(t).worker == worker]

    def _victim(
        self, runtime: RuntimeClient, fleet: Fleet, teams: list[UUID]
    ) -> tuple[str, list[UUID]]:
        fleet.ensure(self.workers)
        # Placement settles (fair shares) before a victim is picked.
        wait_until(
            lambda: all(runtime.where(t).worker in fleet.names() for t in teams),
            timeout=self.answer_timeout,
        )
        name = runtime.where(teams[0]).worker
        assert name is not None
        return name, self._teams_of(runtime, teams, name)

    def _answer_elsewhere(
        self, runtime: RuntimeClient, ledger: AckLedger, teams: list[UUID], gone: str
    ) -> list[Ack]:
        acks: list[Ack] = []
        lock = threading.Lock()

        def ask(team_id: UUID) -> None:
            ack = ledger.send(
                runtime, team_id, "are you back?", key=_key(), timeout=self.answer_timeout
            )
            with lock:
                acks.append(ack)

        threads = [threading.Thread(target=ask, args=(t,)) for t in teams]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.answer_timeout + 30)
        assert len(acks) == len(teams), "some teams did not answer again in time"
        assert all(ack.worker != gone for ack in acks)
        return acks

    def _ack_each(self, runtime: RuntimeClient, ledger: AckLedger, teams: list[UUID]) -> list[Ack]:
        return [ledger.send(runtime, t, "before", key=_key()) for t in teams]

    def test_failover_after_a_worker_is_killed(
        self,
        runtime: RuntimeClient,
        log_store: EventStore,
        fleet: Fleet | None,
        fleet_teams: list[UUID],
        ledger: AckLedger,
    ) -> None:
        assert fleet is not None
        name, held = self._victim(runtime, fleet, fleet_teams)
        assert held
        self._ack_each(runtime, ledger, held)
        fleet.kill(name)
        killed_at = time.monotonic()
        self._answer_elsewhere(runtime, ledger, held, name)
        assert ledger.from_worker(name, since=killed_at) == []
        assert ledger.problems(log_store) == []

    def test_drain_hands_teams_over(
        self,
        runtime: RuntimeClient,
        log_store: EventStore,
        fleet: Fleet | None,
        fleet_teams: list[UUID],
        ledger: AckLedger,
    ) -> None:
        assert fleet is not None
        name, held = self._victim(runtime, fleet, fleet_teams)
        self._ack_each(runtime, ledger, held)
        fleet.drain(name)
        drained_at = time.monotonic()
        self._answer_elsewhere(runtime, ledger, held, name)
        assert ledger.from_worker(name, since=drained_at) == []
        assert ledger.problems(log_store) == []

    def test_a_frozen_worker_acts_no_more_once_it_wakes(
        self,
        runtime: RuntimeClient,
        log_store: EventStore,
        fleet: Fleet | None,
        fleet_teams: list[UUID],
        ledger: AckLedger,
    ) -> None:
        assert fleet is not None
        name, held = self._victim(runtime, fleet, fleet_teams)
        before = self._ack_each(runtime, ledger, held)
        epochs = {ack.team_id: ack.epoch for ack in before}
        fleet.pause(name)
        paused_at = time.monotonic()
        self._answer_elsewhere(runtime, ledger, held, name)
        fleet.wake(name)
        # Ask again while the woken worker still subscribes to its old teams.
        self._answer_elsewhere(runtime, ledger, held, name)
        # As the client saw it: nothing from the frozen worker since it was paused, and
        # every acknowledgement (its earlier ones included) agrees with the log.
        assert ledger.from_worker(name, since=paused_at) == []
        assert ledger.problems(log_store) == []
        for team_id in held:
            record = log_store.load_team(team_id)
            assert record is not None and record.epoch > (epochs[team_id] or 0)
            sequences = [e.sequence for e in log_store.load_events(team_id)]
            assert sequences == list(range(1, len(sequences) + 1))
        fleet.kill(name)


def store_at(url: str) -> Iterator[EventStore]:
    """The event store at ``url``, opened as workers open it, closed when the caller is done."""
    from akgentic.team.urls import open_event_store

    store = open_event_store(url)
    yield store
    store.close()


class FleetRuntimeContract(RuntimeContract):
    """:class:`RuntimeContract` with its three fixtures built from a fleet plugin's own.

    A plugin whose workers run as subprocesses defines ``cluster_url``, ``store_url``
    and ``worker_fleet`` (a :class:`Fleet`) in its conftest; subclassing this gives
    the contract a connected client, the store the workers write and that fleet.
    """

    @pytest.fixture(scope="class")
    @classmethod
    def runtime(cls, cluster_url: str, worker_fleet: Fleet) -> Iterator[RuntimeClient]:
        """A client on the cluster, once the fleet has its workers."""
        from akgentic.cluster import connect

        worker_fleet.ensure(cls.workers)
        client = connect(cluster_url)
        yield client
        client.close()

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls, store_url: str) -> Iterator[EventStore]:
        """The event store the workers write, opened by URL as they open it."""
        yield from store_at(store_url)

    @pytest.fixture(scope="class")
    @classmethod
    def fleet(cls, worker_fleet: Fleet) -> Fleet:
        """The plugin's worker fleet."""
        return worker_fleet
