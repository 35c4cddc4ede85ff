"""The ownership half of the event store contract: claims, epochs and their races.

:class:`OwnershipContract` is mixed into
:class:`~akgentic.testing.EventStoreContract`, so every store that runs the kit
runs these too: creating a team by claim, a held claim refusing every other
handle until released, writes under an older epoch refused without effect,
fenced appends refused for a team without a record (no orphans), several
handles racing to claim one team (exactly one wins, ``claim_race_rounds``
times), a free team's claim never refused while another process probes
``claim_held`` (``probe_race_rounds`` claims), and a claim held by a SIGKILLed
process being free at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.team.errors import (
    TeamClaimLostError,
    TeamNotFoundError,
    TeamOwnedError,
    TeamStateError,
)
from akgentic.team.models import AgentStateSnapshot, TeamOwner, TeamStatus
from akgentic.team.store import EventStore
from akgentic.testing.event_store_fixtures import (
    ContractMetadata,
    ContractState,
    contract_event,
    contract_process,
    resolve_opener,
)

__all__ = ["OwnershipContract", "claim_child", "contract_owner", "probe_child"]


def contract_owner(name: str = "contract") -> TeamOwner:
    """An owner describing this process (``name`` tells two claimants apart)."""
    return TeamOwner.current(f"{name}-{uuid4()}")


def claim_child(opener: str, url: str, team_id: str) -> None:
    """Child process of the claim test: claim the team, say so, then wait to be killed."""
    store = resolve_opener(opener)(url)
    claimed = store.claim_team(UUID(team_id), contract_owner("child"))
    print(claimed.epoch, flush=True)
    threading.Event().wait()


def probe_child(opener: str, url: str, team_id: str) -> None:
    """Child process of the probe test: ask ``claim_held`` over and over until killed."""
    store = resolve_opener(opener)(url)
    team = UUID(team_id)
    store.claim_held(team)
    print("probing", flush=True)
    while True:
        store.claim_held(team)


def _race_claims(handles: list[EventStore], team_id: UUID) -> tuple[list[int], list[Exception]]:
    """Every handle claims ``team_id`` at the same moment: the epochs won, the refusals."""
    barrier = threading.Barrier(len(handles))
    won: list[int] = []
    lost: list[Exception] = []

    def claim(handle: EventStore) -> None:
        barrier.wait(timeout=30)
        try:
            won.append(handle.claim_team(team_id, contract_owner()).epoch)
        except TeamOwnedError as exc:
            lost.append(exc)

    threads = [threading.Thread(target=claim, args=(h,)) for h in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return won, lost


class OwnershipContract:
    """Ownership tests of the event store contract (mixed into ``EventStoreContract``)."""

    opener: ClassVar[str]
    supports_crash_test: ClassVar[bool]
    #: Rounds of the race where several handles claim one team at once.
    claim_race_rounds: ClassVar[int] = 10
    #: Claims made while another process probes ``claim_held`` without a pause.
    probe_race_rounds: ClassVar[int] = 200
    #: Processes probing ``claim_held`` during those claims.
    probing_processes: ClassVar[int] = 2

    def open_store(self, url: str) -> EventStore:  # pragma: no cover - EventStoreContract's
        raise NotImplementedError

    def _populate(self, store: EventStore, user_id: str = "alice", tenant: str = "acme") -> UUID:
        raise NotImplementedError  # pragma: no cover - EventStoreContract's

    def test_creating_a_team_by_claim_records_epoch_one_and_its_owner(
        self, store: EventStore
    ) -> None:
        owner = contract_owner()
        process = contract_process(metadata=ContractMetadata(tenant="acme"))
        try:
            claimed = store.claim_team(process.team_id, owner, create=process)
            assert (claimed.epoch, claimed.owner) == (1, owner)
            loaded = store.load_team(process.team_id)
            assert loaded is not None
            assert (loaded.epoch, loaded.owner) == (1, owner)
            assert loaded.metadata == process.metadata
            assert store.claim_held(process.team_id)
        finally:
            store.release_team(process.team_id)
        assert not store.claim_held(process.team_id)

    def test_creating_a_team_that_exists_is_refused_and_changes_nothing(
        self, store: EventStore
    ) -> None:
        process = contract_process()
        store.save_team(process)
        with pytest.raises(TeamStateError, match="already exists"):
            store.claim_team(process.team_id, contract_owner(), create=contract_process())
        assert store.load_team(process.team_id) == process
        assert not store.claim_held(process.team_id)

    def test_claiming_an_unknown_team_is_not_found(self, store: EventStore) -> None:
        team_id = uuid4()
        with pytest.raises(TeamNotFoundError):
            store.claim_team(team_id, contract_owner())
        assert not store.claim_held(team_id)

    def test_a_held_claim_refuses_a_second_handle_until_released(
        self, store: EventStore, store_url: str
    ) -> None:
        process = contract_process()
        store.save_team(process)
        first = store.claim_team(process.team_id, contract_owner("first"))
        assert first.epoch == process.epoch + 1
        other = self.open_store(store_url)
        try:
            assert other.claim_held(process.team_id)
            with pytest.raises(TeamOwnedError) as info:
                other.claim_team(process.team_id, contract_owner("second"))
            assert info.value.owner == first.owner.describe()  # type: ignore[union-attr]
            with pytest.raises(TeamOwnedError):
                store.claim_team(process.team_id, contract_owner("again"))
            loaded = other.load_team(process.team_id)
            assert loaded is not None
            assert loaded.epoch == first.epoch
            store.release_team(process.team_id)
            second = other.claim_team(process.team_id, contract_owner("second"))
            assert second.epoch == first.epoch + 1
            other.release_team(process.team_id)
        finally:
            other.close()

    def test_writes_under_an_old_epoch_are_refused_and_change_nothing(
        self, store: EventStore, store_url: str
    ) -> None:
        process = contract_process()
        store.save_team(process)
        old = store.claim_team(process.team_id, contract_owner("old"))
        team_id = process.team_id
        store.save_event(contract_event(team_id, 1), epoch=old.epoch)
        store.release_team(team_id)  # the old owner's hold vanished (a lost session...)
        other = self.open_store(store_url)
        try:
            new = other.claim_team(team_id, contract_owner("new"))
            with pytest.raises(TeamClaimLostError) as info:
                store.save_event(contract_event(team_id, 2), epoch=old.epoch)
            assert (info.value.epoch, info.value.current) == (old.epoch, new.epoch)
            save_events = getattr(store, "save_events", None)
            if save_events is not None:
                with pytest.raises(TeamClaimLostError):
                    save_events([contract_event(team_id, 2)], epoch=old.epoch)
            with pytest.raises(TeamClaimLostError):
                store.save_team(old.with_status(TeamStatus.STOPPED), epoch=old.epoch)
            snapshot = AgentStateSnapshot(team_id=team_id, agent_id="a", state=ContractState())
            with pytest.raises(TeamClaimLostError):
                store.save_agent_state(snapshot, epoch=old.epoch)
            assert [e.sequence for e in other.load_events(team_id)] == [1]
            assert other.load_agent_states(team_id) == []
            loaded = other.load_team(team_id)
            assert loaded is not None
            assert (loaded.status, loaded.epoch) == (TeamStatus.RUNNING, new.epoch)
            other.save_event(contract_event(team_id, 2), epoch=new.epoch)
            other.save_team(new.with_status(TeamStatus.STOPPED), epoch=new.epoch)
            other.save_agent_state(snapshot, epoch=new.epoch)
            assert [e.sequence for e in other.load_events(team_id)] == [1, 2]
            final = other.load_team(team_id)
            assert final is not None
            assert (final.status, final.epoch) == (TeamStatus.STOPPED, new.epoch)
            other.release_team(team_id)
        finally:
            other.close()

    def test_a_fenced_append_for_a_team_without_a_record_is_refused(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        with pytest.raises(TeamClaimLostError):
            store.save_event(contract_event(team_id, 1), epoch=1)
        assert store.load_events(team_id) == []
        assert team_id not in store.stored_team_ids()

    def test_handles_racing_to_claim_one_team_let_exactly_one_win(
        self, store: EventStore, store_url: str
    ) -> None:
        handles = [store, *(self.open_store(store_url) for _ in range(3))]
        try:
            for _round in range(self.claim_race_rounds):
                process = contract_process()
                store.save_team(process)
                won, lost = _race_claims(handles, process.team_id)
                assert won == [process.epoch + 1]
                assert len(lost) == len(handles) - 1
                for handle in handles:
                    handle.release_team(process.team_id)
        finally:
            for handle in handles[1:]:
                handle.close()

    def test_a_free_team_is_never_refused_while_other_processes_probe_it(
        self, store: EventStore, store_url: str
    ) -> None:
        # A probe (``akgentic team stop``, a status page...) must not make a free team
        # look owned: a resume racing it would be refused with nobody running the team.
        if not self.supports_crash_test:
            pytest.skip("this store is not shared with other processes")
        process = contract_process()
        store.save_team(process)
        store.claim_team(process.team_id, contract_owner())  # whatever a claim sets up
        store.release_team(process.team_id)
        code = (
            "from akgentic.testing.event_store_ownership import probe_child\n"
            f"probe_child({self.opener!r}, {store_url!r}, {str(process.team_id)!r})\n"
        )
        refused: list[str] = []
        # Each child's ``with`` closes its pipes once it is reaped.
        with contextlib.ExitStack() as reaped:
            children = [
                reaped.enter_context(
                    subprocess.Popen(
                        [sys.executable, "-c", code],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                )
                for _ in range(self.probing_processes)
            ]
            try:
                for child in children:
                    assert child.stdout is not None
                    assert child.stdout.readline().strip() == "probing", (
                        child.stderr.read() if child.stderr else ""
                    )
                for _round in range(self.probe_race_rounds):
                    try:
                        store.claim_team(process.team_id, contract_owner())
                    except TeamOwnedError as exc:
                        refused.append(str(exc))
                        continue
                    store.release_team(process.team_id)
            finally:
                for child in children:
                    child.kill()
                    child.wait(timeout=60)
        assert refused == [], f"{len(refused)} of {self.probe_race_rounds} claims refused"

    def test_stored_team_ids_include_teams_with_events_or_states_but_no_record(
        self, store: EventStore
    ) -> None:
        recorded = self._populate(store)
        orphan = uuid4()
        store.save_event(contract_event(orphan, 1))
        state_only = uuid4()
        store.save_agent_state(
            AgentStateSnapshot(team_id=state_only, agent_id="a", state=ContractState())
        )
        assert {recorded, orphan, state_only} <= store.stored_team_ids()
        store.delete_team(orphan)
        assert orphan not in store.stored_team_ids()

    def test_a_fresh_store_passes_its_integrity_check(self, store: EventStore) -> None:
        self._populate(store)
        assert store.check_integrity() == []

    def test_a_claim_held_by_a_killed_process_is_free_at_once(self, store_url: str) -> None:
        if not self.supports_crash_test:
            pytest.skip("this store keeps nothing once its process is gone")
        store = self.open_store(store_url)
        try:
            process = contract_process()
            store.save_team(process)
            code = (
                "from akgentic.testing.event_store_ownership import claim_child\n"
                f"claim_child({self.opener!r}, {store_url!r}, {str(process.team_id)!r})\n"
            )
            # ``with`` closes the child's pipes once it is reaped.
            with subprocess.Popen(
                [sys.executable, "-c", code],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ) as child:
                try:
                    assert child.stdout is not None
                    line = child.stdout.readline()
                    assert line.strip(), child.stderr.read() if child.stderr else ""
                    assert store.claim_held(process.team_id)
                    with pytest.raises(TeamOwnedError):
                        store.claim_team(process.team_id, contract_owner())
                    os.kill(child.pid, signal.SIGKILL)
                    child.wait(timeout=60)
                finally:
                    if child.poll() is None:
                        child.kill()
                        child.wait(timeout=60)
            claimed = store.claim_team(process.team_id, contract_owner())
            assert claimed.epoch == int(line) + 1
            store.release_team(process.team_id)
        finally:
            store.close()
