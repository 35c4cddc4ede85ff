"""Virtual teams: passivation when idle, activation on demand, faults of an activation.

Real actors, a real SQLite store, real threads; the SIGKILL case runs a real
child process (see test_virtual_team_kill.py).
"""

from __future__ import annotations

import importlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
from akgentic.team import (
    ActivationTimeoutError,
    PersistedEvent,
    SqliteEventStore,
    TeamActivationError,
    TeamCard,
    TeamManager,
    TeamRuntime,
    TeamStateError,
    TeamStatus,
)
from akgentic.testing import wait_until


class GatedStore(SqliteEventStore):
    """A SQLite store whose log reads wait while ``gate`` is closed (a slow activation)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.gate.set()
        self.reads = 0

    def load_events(self, team_id: UUID, *args: Any, **kwargs: Any) -> list[PersistedEvent]:
        self.reads += 1
        assert self.gate.wait(30)
        return super().load_events(team_id, *args, **kwargs)

    def scan_raw_events(self, team_id: UUID, *args: Any, **kwargs: Any) -> list[tuple[int, Any]]:
        # A restore reads the log from its newest checkpoint (akgentic.team.checkpoint).
        self.reads += 1
        assert self.gate.wait(30)
        return super().scan_raw_events(team_id, *args, **kwargs)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GatedStore]:
    store = GatedStore(tmp_path / "virtual.db")
    yield store
    store.gate.set()
    store.close()


@pytest.fixture
def make_manager(
    actor_system: ActorSystem, store: GatedStore
) -> Iterator[Callable[..., TeamManager]]:
    managers: list[TeamManager] = []

    def make(**settings: Any) -> TeamManager:
        manager = TeamManager(actor_system, store, **settings)
        managers.append(manager)
        return manager

    yield make
    store.gate.set()
    for manager in managers:
        manager.stop_all()


def _seen(runtime: TeamRuntime) -> list[str]:
    seen: list[str] = ProxyWrapper(runtime.addrs["@Echo"], ask=True, timeout=10).seen()
    return seen


def _passivated(manager: TeamManager, team_id: UUID) -> None:
    wait_until(
        lambda: (
            (p := manager.get_team(team_id)) is not None
            and p.status == TeamStatus.PASSIVATED
            and manager.get_runtime(team_id) is None
        ),
        timeout=15,
    )


def _gap_free(store: SqliteEventStore, team_id: UUID) -> list[PersistedEvent]:
    events = store.load_events(team_id)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    return events


def test_an_idle_team_is_passivated_and_its_handle_wakes_it(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
    store: GatedStore,
) -> None:
    manager = make_manager(passivate_after=0.2)
    runtime = manager.create_team(team_card())
    runtime.send("one")
    assert runtime.wait_idle(10)
    _passivated(manager, runtime.id)
    assert not runtime.entry_addr.is_alive()
    before = len(_gap_free(store, runtime.id))
    assert [p.team_id for p in manager.list_teams(status=TeamStatus.PASSIVATED)] == [runtime.id]

    runtime.send("two")  # the old handle: the team comes back and gets it
    assert runtime.wait_idle(10)
    assert manager.get_team(runtime.id).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    assert _seen(runtime) == ["one", "two"]  # state restored, then the new message
    manager.get_persistence(runtime.id).flush(10)  # type: ignore[union-attr]
    assert len(_gap_free(store, runtime.id)) > before  # the log continued its sequence


def test_the_card_setting_wins_over_the_manager_and_none_never_passivates(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
) -> None:
    manager = make_manager(passivate_after=None, idle_delay=3600)
    quick = manager.create_team(team_card(passivate_after=0.2))
    slow = manager.create_team(team_card())
    _passivated(manager, quick.id)
    assert manager.get_team(slow.id).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="passivate_after"):
        make_manager(passivate_after=0)


def test_a_stopped_team_wants_a_resume_and_a_passivated_one_resumes_too(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
) -> None:
    manager = make_manager(passivate_after=0.2)
    stopped = manager.create_team(team_card(passivate_after=3000))
    manager.stop_team(stopped.id)
    with pytest.raises(TeamStateError, match="explicit resume"):
        manager.activate(stopped.id)
    with pytest.raises(TeamStateError, match="explicit resume"):
        manager.send(stopped.id, "hello")
    passive = manager.create_team(team_card())
    _passivated(manager, passive.id)
    resumed = manager.resume_team(passive.id)  # the original API still works
    resumed.send("back")
    assert resumed.wait_idle(10)
    manager.stop_team(passive.id)
    assert manager.get_team(passive.id).status == TeamStatus.STOPPED  # type: ignore[union-attr]


def test_a_passivated_team_stops_and_deletes_without_running(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
) -> None:
    manager = make_manager(passivate_after=0.2)
    runtime = manager.create_team(team_card())
    _passivated(manager, runtime.id)
    manager.delete_team(runtime.id)
    assert manager.get_team(runtime.id) is None
    other = manager.create_team(team_card())
    _passivated(manager, other.id)
    manager.stop_team(other.id)
    assert manager.get_team(other.id).status == TeamStatus.STOPPED  # type: ignore[union-attr]


def test_many_concurrent_callers_share_one_activation(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
    store: GatedStore,
) -> None:
    manager = make_manager(passivate_after=0.2)
    runtime = manager.create_team(team_card(passivate_after=0.2))
    _passivated(manager, runtime.id)
    epoch = manager.get_team(runtime.id).epoch  # type: ignore[union-attr]
    store.gate.clear()  # hold the activation until every caller is waiting on it
    reads = store.reads
    callers = 24
    results: list[TeamRuntime] = []
    errors: list[BaseException] = []

    def call(i: int) -> None:
        try:
            results.append(manager.send(runtime.id, f"m{i}"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(callers)]
    for thread in threads:
        thread.start()
    wait_until(lambda: store.reads > reads, timeout=10)  # the one activation is reading
    store.gate.set()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert len({id(r) for r in results}) == 1
    assert store.reads == reads + 1  # one restore read the log
    assert manager.get_team(runtime.id).epoch == epoch + 1  # type: ignore[union-attr]
    live = results[0]
    assert live.wait_idle(10)
    assert sorted(_seen(live)) == sorted(f"m{i}" for i in range(callers))


def test_a_team_that_cannot_activate_is_broken_with_its_reason_and_not_retried(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
    store: GatedStore,
    tmp_path: Path,
) -> None:
    manager = make_manager(passivate_after=0.2)
    runtime = manager.create_team(team_card())
    runtime.send("one")
    assert runtime.wait_idle(10)
    _passivated(manager, runtime.id)
    # An agent class that no longer exists (a renamed module, a removed plugin).
    with sqlite3.connect(tmp_path / "virtual.db") as db:
        changed = db.execute(
            "UPDATE events SET payload = replace(payload, 'team_test_agents.Echo', "
            "'team_test_agents.Gone') WHERE team_id = ?",
            (str(runtime.id),),
        ).rowcount
    assert changed > 0
    with pytest.raises(TeamActivationError, match="Gone") as first:
        manager.send(runtime.id, "two")
    record = manager.get_team(runtime.id)
    assert record is not None and record.status == TeamStatus.BROKEN
    assert record.reason is not None and "Gone" in record.reason
    reads, epoch = store.reads, record.epoch
    with pytest.raises(TeamActivationError) as second:  # at once, from the record
        manager.activate(runtime.id)
    assert second.value.reason == first.value.reason
    assert (store.reads, manager.get_team(runtime.id).epoch) == (reads, epoch)  # type: ignore[union-attr]
    assert [p.team_id for p in manager.list_teams(status=TeamStatus.BROKEN)] == [runtime.id]
    # Fixed, the explicit resume brings it back.
    with sqlite3.connect(tmp_path / "virtual.db") as db:
        db.execute(
            "UPDATE events SET payload = replace(payload, 'team_test_agents.Gone', "
            "'team_test_agents.Echo') WHERE team_id = ?",
            (str(runtime.id),),
        )
    resumed = manager.resume_team(runtime.id)
    assert manager.get_team(runtime.id).reason is None  # type: ignore[union-attr]
    resumed.send("three")
    assert resumed.wait_idle(10)


def test_activations_are_bounded_and_a_waiting_caller_times_out(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
    store: GatedStore,
) -> None:
    manager = make_manager(passivate_after=0.2, max_activations=1)
    first = manager.create_team(team_card())
    second = manager.create_team(team_card())
    _passivated(manager, first.id)
    _passivated(manager, second.id)
    store.gate.clear()
    reads = store.reads
    with pytest.raises(ActivationTimeoutError, match="still activating"):
        manager.activate(first.id, timeout=0.3)  # it goes on in the background
    wait_until(lambda: store.reads > reads, timeout=10)
    with pytest.raises(ActivationTimeoutError, match="queued"):
        manager.activate(second.id, timeout=0.3)
    assert store.reads == reads + 1  # one at a time: the second waits its turn
    store.gate.set()
    assert manager.activate(first.id, timeout=20).id == first.id
    assert manager.activate(second.id, timeout=20).id == second.id


def test_a_team_busy_when_its_countdown_runs_out_is_not_passivated_until_idle(
    make_manager: Callable[..., TeamManager],
    team_card: Callable[..., TeamCard],
    member: Callable[..., dict[str, Any]],
) -> None:
    # The support module is on sys.path (conftest), not a package mypy can see.
    team_test_agents = importlib.import_module("team_test_agents")
    manager = make_manager(passivate_after=0.3)
    runtime = manager.create_team(team_card(members=[member("Gated", "@Slow")]))
    team_test_agents.GATE.clear()
    try:
        runtime.send("work")
        wait_until(lambda: runtime.gate is not None and _in_flight(manager, runtime.id), 10)
        manager.passivate_team(runtime.id, when_idle=True)  # the countdown's call, mid-turn
        assert manager.get_runtime(runtime.id) is runtime
        assert not runtime.closing
        assert manager.get_team(runtime.id).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    finally:
        team_test_agents.GATE.set()
    _passivated(manager, runtime.id)  # once idle, the countdown runs again


def _in_flight(manager: TeamManager, team_id: UUID) -> bool:
    idle = manager._idle.get(team_id)
    return idle is not None and idle.timer.active_tasks > 0
