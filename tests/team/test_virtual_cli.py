"""``akgentic team send`` and ``list`` on virtual teams, in a subprocess on a real store."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

from akgentic.core import ActorSystem
from akgentic.team import SqliteEventStore, TeamCard, TeamManager, TeamStatus
from akgentic.testing import wait_until

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def _passivated_team(path: Path, card: TeamCard) -> UUID:
    store = SqliteEventStore(path)
    system = ActorSystem()
    manager = TeamManager(system, store, passivate_after=0.2)
    try:
        runtime = manager.create_team(card)

        def passivated() -> bool:
            record = manager.get_team(runtime.id)
            return record is not None and record.status == TeamStatus.PASSIVATED

        wait_until(passivated, timeout=30)
        return runtime.id
    finally:
        manager.stop_all()
        system.shutdown(timeout=10)
        store.close()


def test_send_wakes_a_passivated_team_and_leaves_it_passivated(
    run_cli: RunCli, tmp_path: Path, team_card: Callable[..., TeamCard]
) -> None:
    path = tmp_path / "cli.db"
    team_id = _passivated_team(path, team_card())
    listed = json.loads(run_cli("team", "list", "--status", "passivated", "--json").stdout)
    assert [row["team_id"] for row in listed] == [str(team_id)]

    sent = run_cli("team", "send", str(team_id), "hello again")
    assert sent.returncode == 0, sent.stderr
    ack = json.loads(sent.stdout.strip().splitlines()[-1])
    assert ack["team_id"] == str(team_id) and ack["duplicate"] is False
    store = SqliteEventStore(path)
    try:
        record = store.load_team(team_id)
        assert record is not None and record.status == TeamStatus.PASSIVATED
        logged = "\n".join(e.model_dump_json() for e in store.load_events(team_id))
        assert '"hello again"' in logged
    finally:
        store.close()


def test_send_to_a_broken_team_gives_its_reason_and_does_not_retry(
    run_cli: RunCli, tmp_path: Path, team_card: Callable[..., TeamCard]
) -> None:
    path = tmp_path / "cli.db"
    team_id = _passivated_team(path, team_card())
    store = SqliteEventStore(path)
    try:
        record = store.load_team(team_id)
        assert record is not None
        store.save_team(
            record.with_status(TeamStatus.BROKEN).model_copy(
                update={"reason": "EventLogUnreadableError: event 3 is corrupt"}
            )
        )
        epoch = record.epoch
    finally:
        store.close()
    sent = run_cli("team", "send", str(team_id), "hello")
    assert sent.returncode == 1
    assert sent.stderr.startswith("error:") and "event 3 is corrupt" in sent.stderr
    listed = run_cli("team", "list", "--status", "broken")
    assert "event 3 is corrupt" in listed.stdout
    store = SqliteEventStore(path)
    try:
        after = store.load_team(team_id)
        assert after is not None and after.status == TeamStatus.BROKEN and after.epoch == epoch
    finally:
        store.close()
