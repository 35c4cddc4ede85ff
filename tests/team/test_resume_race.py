"""Two managers resuming one team at the same instant: exactly one runs it.

Each manager has its own store handle (as two processes would). A barrier in front
of every handle's ``claim_team`` makes both resumes, and a ``claim_held`` probe
(what ``akgentic team stop`` asks), reach the store at the same moment, so the
interleaving the loaded-machine race only sometimes produces happens every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.team import (
    EventStore,
    SqliteEventStore,
    TeamCard,
    TeamManager,
    TeamOwnedError,
    TeamStatus,
    YamlEventStore,
)
from akgentic.team.runtime import TeamRuntime

ROUNDS = 5


@pytest.fixture(params=["sqlite", "yaml"])
def open_handle(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    opened: list[EventStore] = []

    def open_() -> EventStore:
        handle: EventStore = (
            SqliteEventStore(tmp_path / "race.db")
            if request.param == "sqlite"
            else YamlEventStore(tmp_path / "teams")
        )
        opened.append(handle)
        return handle

    yield open_
    for handle in opened:
        handle.close()


def gate_claims(handle: Any, barrier: threading.Barrier) -> None:
    real = handle.claim_team

    def claim_team(*args: Any, **kwargs: Any) -> Any:
        barrier.wait(timeout=30)
        return real(*args, **kwargs)

    handle.claim_team = claim_team


def race_round(
    actor_system: Any, open_handle: Callable[[], Any], prober: EventStore, team_id: Any
) -> tuple[list[tuple[TeamManager, TeamRuntime]], list[TeamOwnedError]]:
    """Two managers resume ``team_id`` while ``prober`` asks ``claim_held``, all at once."""
    barrier = threading.Barrier(3)
    managers = []
    for _ in range(2):
        handle = open_handle()
        gate_claims(handle, barrier)
        managers.append(TeamManager(actor_system, handle))
    won: list[tuple[TeamManager, TeamRuntime]] = []
    refused: list[TeamOwnedError] = []

    def resume(manager: TeamManager) -> None:
        try:
            won.append((manager, manager.resume_team(team_id)))
        except TeamOwnedError as exc:
            refused.append(exc)

    def probe() -> None:
        barrier.wait(timeout=30)
        prober.claim_held(team_id)

    threads = [threading.Thread(target=resume, args=(m,)) for m in managers]
    threads.append(threading.Thread(target=probe))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return won, refused


def test_two_resumes_at_the_same_instant_let_exactly_one_run_the_team(
    actor_system: Any, team_card: Callable[..., TeamCard], open_handle: Callable[[], Any]
) -> None:
    creator = TeamManager(actor_system, open_handle())
    runtime = creator.create_team(team_card())
    runtime.send("first")
    assert runtime.wait_idle(10)
    creator.stop_team(runtime.id)
    prober = open_handle()
    for _round in range(ROUNDS):
        won, refused = race_round(actor_system, open_handle, prober, runtime.id)
        assert len(won) == 1 and len(refused) == 1, (won, refused)
        assert "is running in process" in str(refused[0])
        winner, resumed = won[0]
        assert prober.claim_held(runtime.id)
        winner.stop_team(resumed.id)
        process = winner.get_team(runtime.id)
        assert process is not None and process.status == TeamStatus.STOPPED
