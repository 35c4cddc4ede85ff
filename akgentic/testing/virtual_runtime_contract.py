"""VirtualRuntimeContract: passivation and activation on demand, through a runtime client.

The store contract (:mod:`akgentic.testing.event_store_virtual`) checks virtual
teams on one :class:`~akgentic.team.TeamManager`. This kit checks them where a
runtime places teams (``local``, a NATS fleet...): an idle team is passivated
and holds no worker; the next message activates it where the runtime places
it, with its idempotency keys intact; concurrent messages share one activation
(the team's epoch moves by one, every acknowledgement names the same worker and
epoch); a team whose log cannot be rebuilt is recorded ``broken`` with its
reason and a message never retries it; a passivated team can be stopped.

Subclass it and provide two class-scoped fixtures:

* ``virtual_runtime``: a :class:`~akgentic.cluster.client.RuntimeClient` whose
  hosts passivate a team after :attr:`VirtualRuntimeContract.passivate_after`
  idle seconds (give the workers that setting);
* ``log_store``: an :class:`~akgentic.team.store.EventStore` open on the store
  the runtime writes (records and logs are checked there, never trusted from
  a worker).

Every wait is bounded by ``virtual_timeout``; nothing here measures speed.
"""

from __future__ import annotations

import itertools
import threading
from typing import ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.cluster.client import Ack, RuntimeClient
from akgentic.team.errors import TeamActivationError
from akgentic.team.models import Process, TeamStatus
from akgentic.team.store import EventStore
from akgentic.testing.cluster_team import quiet_team_card
from akgentic.testing.runtime_contract import check_acks_in_log
from akgentic.testing.waiting import wait_until

__all__ = ["VirtualRuntimeContract"]

_keys = itertools.count()


def _key() -> str:
    return f"virtual-{uuid4().hex[:8]}-{next(_keys)}"


class VirtualRuntimeContract:
    """Virtual teams through a runtime client (see the module docstring)."""

    #: Idle seconds after which the runtime's hosts passivate a team (set them so). Long
    #: enough that a woken team stays awake between two calls of a case on a loaded
    #: machine; the one-activation case depends on it.
    passivate_after: ClassVar[float] = 3.0
    #: Longest any single wait of these cases may take (a bound on a loaded machine).
    virtual_timeout: ClassVar[float] = 60.0
    #: Clients sending to one passivated team at once.
    activation_callers: ClassVar[int] = 8

    @pytest.fixture(scope="class")
    @classmethod
    def virtual_runtime(cls) -> RuntimeClient:
        """The client under test (override)."""
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def log_store(cls) -> EventStore:
        """The store the runtime writes (override)."""
        raise NotImplementedError

    # -- helpers ------------------------------------------------------------
    def _record(self, store: EventStore, team_id: UUID) -> Process:
        record = store.load_team(team_id)
        assert record is not None, f"team {team_id} has no record"
        return record

    def _passivated(self, runtime: RuntimeClient, store: EventStore, team_id: UUID) -> Process:
        """Wait until the store says passivated and the runtime places the team nowhere."""

        def done() -> bool:
            record = store.load_team(team_id)
            if record is None or record.status != TeamStatus.PASSIVATED:
                return False
            return runtime.where(team_id).worker is None

        wait_until(done, timeout=self.virtual_timeout)
        return self._record(store, team_id)

    @staticmethod
    def _gap_free(store: EventStore, team_id: UUID) -> None:
        sequences = [e.sequence for e in store.load_events(team_id)]
        assert sequences == list(range(1, len(sequences) + 1)), "the log has a gap"

    # -- cases --------------------------------------------------------------
    def test_an_idle_team_is_passivated_and_placed_nowhere(
        self, virtual_runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = virtual_runtime.create(quiet_team_card())
        ack = virtual_runtime.send(team_id, "before the nap", key=_key())
        record = self._passivated(virtual_runtime, log_store, team_id)
        assert record.status == TeamStatus.PASSIVATED
        placement = virtual_runtime.where(team_id)
        assert placement.worker is None and placement.status == "passivated"
        listed = virtual_runtime.list_teams(status=TeamStatus.PASSIVATED)
        assert team_id in {summary.team_id for summary in listed}
        assert check_acks_in_log(log_store, [ack]) == []
        self._gap_free(log_store, team_id)

    def test_a_message_activates_it_where_the_runtime_places_it_and_keys_survive(
        self, virtual_runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = virtual_runtime.create(quiet_team_card())
        key = _key()
        first = virtual_runtime.send(team_id, "before the nap", key=key)
        epoch = self._passivated(virtual_runtime, log_store, team_id).epoch
        # A retry of a key the team took before its nap wakes it and delivers nothing.
        again = virtual_runtime.send(team_id, "before the nap", key=key)
        assert again.duplicate and again.sequence == first.sequence
        assert again.epoch in (None, epoch + 1), "the wake-up was not one new claim"
        fresh = virtual_runtime.send(team_id, "after the nap", key=_key())
        assert not fresh.duplicate and fresh.sequence > first.sequence
        assert fresh.worker
        # (Idle again, it may be passivated again by now: the record is not read here.)
        assert check_acks_in_log(log_store, [first, again, fresh]) == []
        self._gap_free(log_store, team_id)

    def test_concurrent_messages_share_one_activation_and_one_owner(
        self, virtual_runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = virtual_runtime.create(quiet_team_card())
        epoch = self._passivated(virtual_runtime, log_store, team_id).epoch
        start = threading.Barrier(self.activation_callers)
        acks: list[Ack] = []
        errors: list[BaseException] = []

        def call() -> None:
            start.wait(self.virtual_timeout)
            try:
                acks.append(virtual_runtime.send(team_id, "wake up", key=_key()))
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(self.activation_callers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.virtual_timeout * 2)
        assert errors == []
        assert len(acks) == self.activation_callers
        assert len({ack.worker for ack in acks}) == 1, "two owners answered"
        assert len({ack.sequence for ack in acks}) == len(acks)
        assert self._record(log_store, team_id).epoch == epoch + 1, "more than one claim"
        assert {ack.epoch for ack in acks} <= {epoch + 1, None}
        assert check_acks_in_log(log_store, acks) == []
        self._gap_free(log_store, team_id)

    def test_a_team_that_cannot_activate_is_broken_and_a_message_never_retries_it(
        self, virtual_runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = uuid4()
        # A passivated record with no log at all: nothing to rebuild the team from.
        log_store.save_team(
            Process(team_id=team_id, team_card=quiet_team_card(), status=TeamStatus.PASSIVATED)
        )
        with pytest.raises(TeamActivationError) as woken:
            virtual_runtime.send(team_id, "hello", key=_key())
        reason = woken.value.reason
        assert "empty event log" in reason
        record = self._record(log_store, team_id)
        assert record.status == TeamStatus.BROKEN and record.reason == reason
        with pytest.raises(TeamActivationError) as again:
            virtual_runtime.send(team_id, "hello again", key=_key())
        assert again.value.reason == reason
        assert self._record(log_store, team_id).epoch == record.epoch, "claimed again"
        listed = virtual_runtime.list_teams(status=TeamStatus.BROKEN)
        assert team_id in {summary.team_id for summary in listed}
        # An explicit resume tries again (and still cannot).
        with pytest.raises(TeamActivationError):
            virtual_runtime.resume(team_id)
        assert self._record(log_store, team_id).status == TeamStatus.BROKEN

    def test_a_passivated_team_can_be_stopped(
        self, virtual_runtime: RuntimeClient, log_store: EventStore
    ) -> None:
        team_id = virtual_runtime.create(quiet_team_card())
        self._passivated(virtual_runtime, log_store, team_id)
        virtual_runtime.stop(team_id)
        assert self._record(log_store, team_id).status == TeamStatus.STOPPED
        placement = virtual_runtime.where(team_id)
        assert placement.worker is None and placement.status == "stopped"
