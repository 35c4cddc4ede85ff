"""The takeover half of the event store contract: moving a team off a live but lapsed owner.

:class:`TakeoverContract` is mixed into :class:`~akgentic.testing.EventStoreContract`.
Its cases run for every store that implements
:class:`~akgentic.team.store.TakeoverEventStore` and skip for the others; set
``supports_takeover = True`` in a subclass whose store must implement it, and
the kit checks that it does.

In one process, with two handles: a takeover bumps the epoch and records the
new owner while the old holder still holds its claim, every later write of the
old holder is refused without effect, a takeover from a stale epoch or of an
unknown team changes nothing, and handles racing to take a team over from one
epoch let exactly one win.

Across processes (skipped when ``supports_crash_test`` is false, for storage a
child process cannot share): owners are separate programs on the same
storage. In the *frozen chain*, a first owner claims the team, writes and
freezes itself (SIGSTOP, between two writes); a second owner takes the team
over, writes and freezes; the test process takes it over and writes; both
frozen owners are then woken and each of their writes (event, record, agent
state) must be refused. In the *race*, the old owner appends as fast as it can
while the test takes the team over: every write it had acknowledged lies at or
below the log's end as read right after the takeover, and it is fenced on its
next write. Both check that the log is exactly the acknowledged writes, each
sequence once, with no gap, and that the epochs of the successive owners
strictly increase.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar
from uuid import UUID

import pytest

from akgentic.team.errors import TeamClaimLostError, TeamNotFoundError, TeamOwnedError
from akgentic.team.models import AgentStateSnapshot, Process, TeamStatus
from akgentic.team.store import EventStore, TakeoverEventStore
from akgentic.testing.event_store_fixtures import (
    ContractState,
    contract_event,
    contract_process,
    resolve_opener,
)
from akgentic.testing.event_store_ownership import contract_owner
from akgentic.testing.waiting import wait_until

__all__ = ["TakeoverContract", "takeover_child"]

#: Seconds the cross-process cases wait for one line of a child owner.
CHILD_TIMEOUT = 60.0


def _content(role: str, epoch: int, sequence: int) -> str:
    return f"{role}:{epoch}:{sequence}"


def _try_fenced_writes(store: EventStore, team_id: UUID, epoch: int, sequence: int) -> None:
    """Write an event, the record and a state under ``epoch``; print how each one ended."""
    record = store.load_team(team_id)
    assert record is not None
    snapshot = AgentStateSnapshot(
        team_id=team_id, agent_id="fenced", state=ContractState(counter=epoch)
    )
    attempts: tuple[tuple[str, Callable[[], None]], ...] = (
        ("event", lambda: store.save_event(contract_event(team_id, sequence), epoch=epoch)),
        ("team", lambda: store.save_team(record.with_status(TeamStatus.STOPPED), epoch=epoch)),
        ("state", lambda: store.save_agent_state(snapshot, epoch=epoch)),
    )
    for kind, write in attempts:
        try:
            write()
        except TeamClaimLostError as exc:
            print(f"fenced {kind} {exc.current}", flush=True)
        else:
            print(f"wrote {kind}", flush=True)


def takeover_child(opener: str, url: str, team_id: str, role: str, epoch: int, count: int) -> None:
    """Child owner of the cross-process cases (its protocol is its stdout lines).

    Takes the team (``epoch == 0``: by claim; otherwise by takeover from
    ``epoch``) and prints ``epoch N``. With ``count > 0`` it appends ``count``
    events (``ack S`` each), prints ``pause`` and stops itself; once continued
    it tries one write of each kind. With ``count == 0`` it appends until a
    write is refused. Either way each refused write prints ``fenced KIND
    CURRENT`` (a write that went through prints ``wrote KIND``).
    """
    store = resolve_opener(opener)(url)
    team = UUID(team_id)
    owner = contract_owner(role)
    if epoch == 0:
        mine = store.claim_team(team, owner).epoch
    else:
        assert isinstance(store, TakeoverEventStore)
        mine = store.take_over_team(team, owner, epoch=epoch).epoch
    print(f"epoch {mine}", flush=True)
    sequence = store.get_max_sequence(team)
    if count > 0:
        for _ in range(count):
            sequence += 1
            store.save_event(
                contract_event(team, sequence, _content(role, mine, sequence)), epoch=mine
            )
            print(f"ack {sequence}", flush=True)
        print("pause", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)  # frozen between two writes, claim still held
        _try_fenced_writes(store, team, mine, sequence + 1)
        return
    while True:
        sequence += 1
        try:
            store.save_event(
                contract_event(team, sequence, _content(role, mine, sequence)), epoch=mine
            )
        except TeamClaimLostError as exc:
            print(f"fenced event {exc.current}", flush=True)
            _try_fenced_writes(store, team, mine, sequence)
            return
        print(f"ack {sequence}", flush=True)


class _ChildOwner:
    """A :func:`takeover_child` process whose lines are read with a timeout."""

    def __init__(
        self, opener: str, url: str, team_id: UUID, role: str, epoch: int, count: int
    ) -> None:
        code = (
            "from akgentic.testing.event_store_takeover import takeover_child\n"
            f"takeover_child({opener!r}, {url!r}, {str(team_id)!r}, {role!r}, {epoch}, {count})\n"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.acks: list[int] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def line(self) -> str:
        """The next line, counting acks (``AssertionError`` at the end or on a timeout)."""
        try:
            text = self.lines.get(timeout=CHILD_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"child owner silent for {CHILD_TIMEOUT:g} s") from None
        if text is None:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"child owner ended early: {err[-2000:]}")
        if text.startswith("ack "):
            self.acks.append(int(text.split()[1]))
        return text

    def until(self, prefix: str) -> str:
        """Read lines up to the first one starting with ``prefix``."""
        while True:
            text = self.line()
            if text.startswith(prefix):
                return text

    def epoch(self) -> int:
        return int(self.until("epoch ").split()[1])

    def wait_frozen(self) -> None:
        self.until("pause")
        wait_until(lambda: _stopped(self.proc.pid), timeout=CHILD_TIMEOUT)

    def fenced(self) -> dict[str, str]:
        """The outcome of each write it tried after being fenced (or woken), then its exit."""
        outcomes: dict[str, str] = {}
        while len(outcomes) < 3:
            text = self.line()
            if text.startswith(("fenced ", "wrote ")):
                parts = text.split()
                outcomes.setdefault(parts[1], text)
        assert self.proc.wait(timeout=CHILD_TIMEOUT) == 0
        return outcomes

    def close(self) -> None:
        """Kill the child if it still runs, then close its pipes (its reader hits EOF)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=CHILD_TIMEOUT)
        self._reader.join(timeout=CHILD_TIMEOUT)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdout.close()
        self.proc.stderr.close()


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (state ``T`` in ``/proc/<pid>/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rpartition(")")[2].split()[0] in ("T", "t")


def _race_takeovers(
    handles: list[TakeoverEventStore], team_id: UUID, epoch: int
) -> tuple[list[int], list[Exception]]:
    barrier = threading.Barrier(len(handles))
    won: list[int] = []
    lost: list[Exception] = []

    def take(handle: TakeoverEventStore) -> None:
        barrier.wait(timeout=30)
        try:
            won.append(handle.take_over_team(team_id, contract_owner(), epoch=epoch).epoch)
        except TeamClaimLostError as exc:
            lost.append(exc)

    threads = [threading.Thread(target=take, args=(h,)) for h in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return won, lost


class TakeoverContract:
    """Takeover cases of the event store kit (mixed into ``EventStoreContract``)."""

    opener: ClassVar[str]
    supports_crash_test: ClassVar[bool]
    #: The store must implement ``take_over_team`` (not only may).
    supports_takeover: ClassVar[bool] = False
    #: Rounds of the race where several handles take one team over at once.
    takeover_race_rounds: ClassVar[int] = 5
    #: Events the racing old owner must have acknowledged before the takeover.
    takeover_race_acks: ClassVar[int] = 20

    def open_store(self, url: str) -> EventStore:  # pragma: no cover - EventStoreContract's
        raise NotImplementedError

    def _takeover(self, store: EventStore) -> TakeoverEventStore:
        if not isinstance(store, TakeoverEventStore):
            pytest.skip("this store has no take_over_team")
        return store

    def _other(self, store_url: str) -> TakeoverEventStore:
        other = self.open_store(store_url)
        assert isinstance(other, TakeoverEventStore)
        return other

    def test_a_store_declaring_takeover_implements_it(self, store: EventStore) -> None:
        if not self.supports_takeover:
            pytest.skip("store does not declare takeover")
        assert isinstance(store, TakeoverEventStore)

    def test_a_takeover_moves_a_held_team_and_fences_its_holder(
        self, store: EventStore, store_url: str
    ) -> None:
        self._takeover(store)
        process = contract_process()
        store.save_team(process)
        team_id = process.team_id
        old = store.claim_team(team_id, contract_owner("old"))
        store.save_event(contract_event(team_id, 1), epoch=old.epoch)
        other = self._other(store_url)
        try:
            with pytest.raises(TeamOwnedError):
                other.claim_team(team_id, contract_owner("refused"))
            new_owner = contract_owner("new")
            new = other.take_over_team(team_id, new_owner, epoch=old.epoch)
            assert (new.epoch, new.owner, new.status) == (old.epoch + 1, new_owner, old.status)
            assert new.metadata == process.metadata
            assert other.load_team(team_id) == new
            _refused_everywhere(store, old)
            assert [e.sequence for e in other.load_events(team_id)] == [1]
            assert other.load_agent_states(team_id) == []
            assert other.load_team(team_id) == new
            other.save_event(contract_event(team_id, 2), epoch=new.epoch)
            other.save_team(new.with_status(TeamStatus.STOPPED), epoch=new.epoch)
            assert [e.sequence for e in store.load_events(team_id)] == [1, 2]
            # The takeover took no hold of its own: once the old holder lets go,
            # nobody holds the team, and an ordinary claim bumps the epoch again.
            store.release_team(team_id)
            assert not other.claim_held(team_id)
            again = other.claim_team(team_id, contract_owner("again"))
            assert again.epoch == new.epoch + 1
            other.release_team(team_id)
        finally:
            store.release_team(team_id)
            other.close()

    def test_a_takeover_from_a_stale_epoch_or_of_an_unknown_team_changes_nothing(
        self, store: EventStore
    ) -> None:
        taker = self._takeover(store)
        process = contract_process()
        store.save_team(process)
        claimed = store.claim_team(process.team_id, contract_owner())
        store.release_team(process.team_id)
        for stale in (claimed.epoch - 1, claimed.epoch + 1):
            with pytest.raises(TeamClaimLostError) as info:
                taker.take_over_team(process.team_id, contract_owner("late"), epoch=stale)
            assert (info.value.epoch, info.value.current) == (stale, claimed.epoch)
        assert store.load_team(process.team_id) == claimed
        unknown = contract_process().team_id
        with pytest.raises(TeamNotFoundError):
            taker.take_over_team(unknown, contract_owner(), epoch=1)
        assert store.load_team(unknown) is None
        assert unknown not in store.stored_team_ids()

    def test_handles_racing_to_take_a_team_over_let_exactly_one_win(
        self, store: EventStore, store_url: str
    ) -> None:
        self._takeover(store)
        handles = [self._other(store_url) for _ in range(4)]
        try:
            for _round in range(self.takeover_race_rounds):
                process = contract_process()
                store.save_team(process)
                won, lost = _race_takeovers(handles, process.team_id, process.epoch)
                assert won == [process.epoch + 1]
                assert len(lost) == len(handles) - 1
                assert all(
                    (e.epoch, e.current) == (process.epoch, process.epoch + 1)  # type: ignore[attr-defined]
                    for e in lost
                )
                loaded = store.load_team(process.team_id)
                assert loaded is not None and loaded.epoch == process.epoch + 1
        finally:
            for handle in handles:
                handle.close()

    # -- across processes ---------------------------------------------------
    def _cross_process(self, store: EventStore) -> TakeoverEventStore:
        taker = self._takeover(store)
        if not self.supports_crash_test:
            pytest.skip("this store cannot be shared with a child process")
        if not Path(f"/proc/{os.getpid()}/stat").exists():
            pytest.skip("needs /proc to see that a child is stopped")
        return taker

    def test_frozen_owners_taken_over_in_turn_are_fenced_when_they_wake(
        self, store: EventStore, store_url: str
    ) -> None:
        taker = self._cross_process(store)
        process = contract_process()
        store.save_team(process)
        team_id = process.team_id
        children: list[_ChildOwner] = []
        try:
            first = _ChildOwner(self.opener, store_url, team_id, "first", 0, 5)
            children.append(first)
            first_epoch = first.epoch()
            first.wait_frozen()
            # Frozen, it still holds its claim: only a takeover can move the team.
            assert store.claim_held(team_id)
            with pytest.raises(TeamOwnedError):
                store.claim_team(team_id, contract_owner("refused"))
            second = _ChildOwner(self.opener, store_url, team_id, "second", first_epoch, 5)
            children.append(second)
            second_epoch = second.epoch()
            second.wait_frozen()
            record = store.load_team(team_id)
            assert record is not None and record.epoch == second_epoch
            mine = taker.take_over_team(team_id, contract_owner("third"), epoch=second_epoch)
            start = store.get_max_sequence(team_id)
            for sequence in range(start + 1, start + 6):
                store.save_event(
                    contract_event(team_id, sequence, _content("third", mine.epoch, sequence)),
                    epoch=mine.epoch,
                )
            store.save_team(mine, epoch=mine.epoch)
            for child in children:
                child.proc.send_signal(signal.SIGCONT)
            for child in children:
                outcomes = child.fenced()
                assert outcomes == {
                    kind: f"fenced {kind} {mine.epoch}" for kind in ("event", "team", "state")
                }
            assert process.epoch < first_epoch < second_epoch < mine.epoch
            writers = [
                ("first", first_epoch, first.acks),
                ("second", second_epoch, second.acks),
                ("third", mine.epoch, list(range(start + 1, start + 6))),
            ]
            _check_log(store, team_id, writers)
            assert store.load_team(team_id) == mine
            assert store.load_agent_states(team_id) == []
        finally:
            for child in children:
                child.close()

    def test_an_owner_writing_while_taken_over_loses_nothing_it_acknowledged(
        self, store: EventStore, store_url: str
    ) -> None:
        taker = self._cross_process(store)
        process = contract_process()
        store.save_team(process)
        team_id = process.team_id
        old = _ChildOwner(self.opener, store_url, team_id, "old", 0, 0)
        try:
            old_epoch = old.epoch()
            while len(old.acks) < self.takeover_race_acks:
                old.line()
            mine = taker.take_over_team(team_id, contract_owner("new"), epoch=old_epoch)
            end = store.get_max_sequence(team_id)
            for sequence in range(end + 1, end + 6):
                store.save_event(
                    contract_event(team_id, sequence, _content("new", mine.epoch, sequence)),
                    epoch=mine.epoch,
                )
            outcomes = old.fenced()
            assert outcomes == {
                kind: f"fenced {kind} {mine.epoch}" for kind in ("event", "team", "state")
            }
            # Exactly what it acknowledged precedes the takeover: nothing after it.
            assert old.acks == list(range(1, end + 1)), "a write acknowledged after the takeover"
            assert old_epoch < mine.epoch
            _check_log(
                store,
                team_id,
                [("old", old_epoch, old.acks), ("new", mine.epoch, [])],
                extra=list(range(end + 1, end + 6)),
            )
            assert store.load_team(team_id) == mine
        finally:
            old.close()


def _refused_everywhere(store: EventStore, old: Process) -> None:
    """Every kind of write under ``old.epoch`` is refused (the caller checks nothing changed)."""
    team_id = old.team_id
    with pytest.raises(TeamClaimLostError):
        store.save_event(contract_event(team_id, 2), epoch=old.epoch)
    save_events = getattr(store, "save_events", None)
    if save_events is not None:
        with pytest.raises(TeamClaimLostError):
            save_events([contract_event(team_id, 2), contract_event(team_id, 3)], epoch=old.epoch)
    with pytest.raises(TeamClaimLostError):
        store.save_team(old.with_status(TeamStatus.STOPPED), epoch=old.epoch)
    snapshot = AgentStateSnapshot(team_id=team_id, agent_id="a", state=ContractState())
    with pytest.raises(TeamClaimLostError):
        store.save_agent_state(snapshot, epoch=old.epoch)


def _check_log(
    store: EventStore,
    team_id: UUID,
    writers: list[tuple[str, int, list[int]]],
    extra: list[int] | None = None,
) -> None:
    """The log is 1..N, each sequence once, written by the owner that acknowledged it.

    ``writers`` are ``(role, epoch, acknowledged sequences)``; ``extra``
    sequences belong to the last writer.
    """
    events = store.load_events(team_id)
    sequences = [e.sequence for e in events]
    assert sequences == list(range(1, len(events) + 1)), "a gap or a duplicate in the log"
    expected: dict[int, str] = {}
    for role, epoch, acked in writers:
        for sequence in acked:
            expected[sequence] = _content(role, epoch, sequence)
    last_role, last_epoch, _ = writers[-1]
    for sequence in extra or []:
        expected[sequence] = _content(last_role, last_epoch, sequence)
    found = {e.sequence: e.event.content for e in events}  # type: ignore[attr-defined]
    assert found == expected
