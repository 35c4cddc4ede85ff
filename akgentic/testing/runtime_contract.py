"""RuntimeContract: the behaviour every runtime (``local``, ``nats``...) must show.

Subclass it in a runtime's tests and provide three class-scoped fixtures:

* ``runtime`` — a :class:`~akgentic.cluster.client.RuntimeClient`;
* ``log_store`` — an :class:`~akgentic.team.store.EventStore` open on the store
  the runtime writes (the tests read the logs there to check what was acknowledged);
* ``fleet`` — a :class:`Fleet` of worker processes, or ``None`` for a runtime
  that runs in one process (the failover, drain and split-brain tests then skip).

The single-process tests: acknowledgements carry durable sequences, one
delivery per idempotency key (across a stop and resume too), activation on
demand, replay-then-follow, delete, and no acknowledged request lost. The fleet
tests kill (SIGKILL), drain (SIGTERM) and freeze (SIGSTOP) a worker holding
teams and check that each of its teams answers again on another worker within
``answer_timeout`` (a bound, not a speed target), that every acknowledged
request is in the log, and that a frozen worker acknowledges nothing once it
wakes. Speed targets belong to ``bench/cluster.py``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Protocol
from uuid import UUID

import pytest

from akgentic.cluster.client import Ack, RuntimeClient
from akgentic.cluster.keys import inbound_id
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team.errors import TeamNotFoundError
from akgentic.team.store import EventStore
from akgentic.testing.cluster_team import quiet_team_card
from akgentic.testing.waiting import wait_until

__all__ = ["Fleet", "RuntimeContract", "check_acks_in_log"]

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

    def acks(self, name: str) -> int:
        """How many requests the worker has acknowledged, as it reports after this call."""
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

    def _answer_elsewhere(self, runtime: RuntimeClient, teams: list[UUID], gone: str) -> list[Ack]:
        acks: list[Ack] = []
        lock = threading.Lock()

        def ask(team_id: UUID) -> None:
            ack = runtime.send(team_id, "are you back?", key=_key(), timeout=self.answer_timeout)
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

    def _ack_each(self, runtime: RuntimeClient, teams: list[UUID]) -> list[Ack]:
        return [runtime.send(t, "before", key=_key()) for t in teams]

    def test_failover_after_a_worker_is_killed(
        self,
        runtime: RuntimeClient,
        log_store: EventStore,
        fleet: Fleet | None,
        fleet_teams: list[UUID],
    ) -> None:
        assert fleet is not None
        name, held = self._victim(runtime, fleet, fleet_teams)
        assert held
        before = self._ack_each(runtime, held)
        fleet.kill(name)
        after = self._answer_elsewhere(runtime, held, name)
        assert check_acks_in_log(log_store, before + after) == []

    def test_drain_hands_teams_over(
        self,
        runtime: RuntimeClient,
        log_store: EventStore,
        fleet: Fleet | None,
        fleet_teams: list[UUID],
    ) -> None:
        assert fleet is not None
        name, held = self._victim(runtime, fleet, fleet_teams)
        before = self._ack_each(runtime, held)
        fleet.drain(name)
        after = self._answer_elsewhere(runtime, held, name)
        assert check_acks_in_log(log_store, before + after) == []

    def test_a_frozen_worker_acts_no_more_once_it_wakes(
        self,
        runtime: RuntimeClient,
        log_store: EventStore,
        fleet: Fleet | None,
        fleet_teams: list[UUID],
    ) -> None:
        assert fleet is not None
        name, held = self._victim(runtime, fleet, fleet_teams)
        before = self._ack_each(runtime, held)
        epochs = {ack.team_id: ack.epoch for ack in before}
        acks_before = fleet.acks(name)
        fleet.pause(name)
        taken = self._answer_elsewhere(runtime, held, name)
        fleet.wake(name)
        # Ask again while the woken worker still subscribes to its old teams.
        after = self._answer_elsewhere(runtime, held, name)
        assert fleet.acks(name) == acks_before
        assert check_acks_in_log(log_store, before + taken + after) == []
        for team_id in held:
            record = log_store.load_team(team_id)
            assert record is not None and record.epoch > (epochs[team_id] or 0)
            sequences = [e.sequence for e in log_store.load_events(team_id)]
            assert sequences == list(range(1, len(sequences) + 1))
        fleet.kill(name)
