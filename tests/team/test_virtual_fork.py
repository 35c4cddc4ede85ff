"""Forks and rewinds of virtual teams: a passivated or broken parent, a fork that passivates.

Real actors and a real SQLite store: a passivated team is forked without being
woken, the fork runs once resumed and then passivates and wakes like any team
(keeping its lineage); a rewound passivated team is stopped so no message wakes
the abandoned branch; a broken parent's reason is not the fork's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
from akgentic.team import (
    SqliteEventStore,
    TeamCard,
    TeamManager,
    TeamRuntime,
    TeamStateError,
    TeamStatus,
)
from akgentic.testing import wait_until


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteEventStore]:
    with SqliteEventStore(tmp_path / "virtual-fork.db") as store:
        yield store


@pytest.fixture
def manager(actor_system: ActorSystem, store: SqliteEventStore) -> Iterator[TeamManager]:
    manager = TeamManager(actor_system, store, passivate_after=0.2)
    yield manager
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


def _status(manager: TeamManager, team_id: UUID) -> Any:
    record = manager.get_team(team_id)
    assert record is not None
    return record.status


def _passivated_team(manager: TeamManager, card: TeamCard) -> UUID:
    runtime = manager.create_team(card)
    runtime.send("one")
    assert runtime.wait_idle(10)
    _passivated(manager, runtime.id)
    return runtime.id


def test_a_passivated_team_is_forked_unwoken_and_the_fork_passivates_and_wakes(
    manager: TeamManager,
    store: SqliteEventStore,
    team_card: Callable[..., TeamCard],
) -> None:
    parent = _passivated_team(manager, team_card())
    epoch = store.load_team(parent).epoch  # type: ignore[union-attr]
    at = store.get_max_sequence(parent)

    fork = manager.fork_team(parent, at, "branch")

    # The parent was only read: still passivated, not claimed again, nothing running.
    assert _status(manager, parent) == TeamStatus.PASSIVATED
    assert store.load_team(parent).epoch == epoch  # type: ignore[union-attr]
    assert manager.get_runtime(parent) is None
    child = manager.get_team(fork.team_id)
    assert child is not None and child.status == TeamStatus.STOPPED and child.reason is None
    assert (child.lineage.parent_id, child.lineage.parent_sequence) == (parent, at)
    with pytest.raises(TeamStateError, match="explicit resume"):
        manager.activate(fork.team_id)  # a fork is stopped: a message does not wake it

    resumed = manager.resume_team(fork.team_id)
    assert _seen(resumed) == ["one"]  # the parent's state at the fork point
    _passivated(manager, fork.team_id)
    woken = manager.send(fork.team_id, "two")
    assert woken.wait_idle(10)
    assert _seen(woken) == ["one", "two"]
    again = manager.get_team(fork.team_id)
    assert again is not None and again.status == TeamStatus.RUNNING
    assert again.lineage == child.lineage and again.name == "branch"

    # The parent still wakes on its own message, and never saw the fork's.
    parent_runtime = manager.send(parent, "three")
    assert parent_runtime.wait_idle(10)
    assert _seen(parent_runtime) == ["one", "three"]


def test_a_rewound_passivated_team_is_stopped_so_no_message_wakes_it(
    manager: TeamManager,
    store: SqliteEventStore,
    team_card: Callable[..., TeamCard],
) -> None:
    original = _passivated_team(manager, team_card())

    rewound = manager.rewind_team(original, 1)

    record = manager.get_team(original)
    assert record is not None and record.lineage.abandoned_for == rewound.team_id
    assert record.status == TeamStatus.STOPPED
    assert not store.claim_held(original)
    with pytest.raises(TeamStateError, match="explicit resume"):
        manager.send(original, "late")
    assert _status(manager, rewound.team_id) == TeamStatus.STOPPED
    assert manager.get_team(rewound.team_id).name == record.name  # type: ignore[union-attr]
    runtime = manager.resume_team(original)  # still resumable on purpose
    assert _seen(runtime) == ["one"]


def test_a_broken_parent_s_reason_is_not_the_fork_s(
    manager: TeamManager,
    store: SqliteEventStore,
    team_card: Callable[..., TeamCard],
) -> None:
    parent = _passivated_team(manager, team_card())
    claimed = store.claim_team(parent, manager.owner)
    try:
        broken = claimed.with_status(TeamStatus.BROKEN).model_copy(
            update={"reason": "ImportError: gone"}
        )
        store.save_team(broken, epoch=claimed.epoch)
    finally:
        store.release_team(parent)

    fork = manager.fork_team(parent, store.get_max_sequence(parent))

    child = manager.get_team(fork.team_id)
    assert child is not None and child.status == TeamStatus.STOPPED and child.reason is None
    parent_record = manager.get_team(parent)
    assert parent_record is not None and parent_record.reason == "ImportError: gone"
