"""``akgentic team fork``, ``rewind`` and ``lineage``, and the lineage column of ``list``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.team import SqliteEventStore
from akgentic.testing.cards import entry_echo_team_yaml

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def team(run_cli: Run, tmp_path: Path) -> str:
    card = tmp_path / "card.yaml"
    card.write_text(entry_echo_team_yaml("cli-fork", "team_test_agents.Echo"))
    created = run_cli("team", "create", str(card), "--send", "one", "--send", "two")
    assert created.returncode == 0, created.stderr
    return created.stdout.strip().splitlines()[-1]


def _store(tmp_path: Path) -> SqliteEventStore:
    return SqliteEventStore(tmp_path / "cli.db")


def test_fork_prints_the_new_id_and_list_and_lineage_show_it(
    run_cli: Run, team: str, tmp_path: Path
) -> None:
    with _store(tmp_path) as store:
        total = store.get_max_sequence(UUID(team))
    forked = run_cli("team", "fork", team, "--at", "3", "--name", "branch")
    assert forked.returncode == 0, forked.stderr
    child = forked.stdout.strip()
    with _store(tmp_path) as store:
        record = store.load_team(UUID(child))
        assert record is not None and record.lineage.parent_id == UUID(team)
        assert [e.sequence for e in store.load_events(UUID(child))] == [1, 2, 3]
        assert store.get_max_sequence(UUID(team)) == total  # the parent is untouched
    listed = run_cli("team", "list", "--json")
    rows = {row["team_id"]: row for row in json.loads(listed.stdout)}
    assert rows[child]["name"] == "branch"
    assert rows[child]["parent_id"] == team and rows[child]["parent_sequence"] == 3
    assert rows[child]["lineage"] == f"fork of {team[:8]} @ 3"
    table = run_cli("team", "list")
    assert f"fork of {team[:8]} @ 3" in table.stdout
    family = json.loads(run_cli("team", "lineage", team, "--json").stdout)
    assert [node["team_id"] for node in family["forks"]] == [child]
    up = json.loads(run_cli("team", "lineage", child, "--json").stdout)
    assert up["ancestors"] == [
        {"team_id": team, "name": "cli-fork", "forked_at": 3, "status": "stopped"}
    ]
    assert [node["status"] for node in family["forks"]] == ["stopped"]
    printed = run_cli("team", "lineage", team).stdout
    assert f"{child} branch (fork at 3, stopped)" in printed
    resumed = run_cli("team", "resume", child, "--send", "three")
    assert resumed.returncode == 0, resumed.stderr
    assert "@Entry → @Echo: three" in resumed.stderr


def test_rewind_takes_the_name_and_keeps_the_abandoned_team(
    run_cli: Run, team: str, tmp_path: Path
) -> None:
    rewound = run_cli("team", "rewind", team, "--to", "4")
    assert rewound.returncode == 0, rewound.stderr
    child = rewound.stdout.strip()
    rows = {row["team_id"]: row for row in json.loads(run_cli("team", "list", "--json").stdout)}
    assert rows[child]["name"] == rows[team]["name"] == "cli-fork"
    assert rows[team]["abandoned_for"] == child
    assert rows[team]["lineage"] == f"abandoned for {child[:8]}"
    assert rows[child]["lineage"] == f"rewind of {team[:8]} @ 4"
    inspected = run_cli("team", "inspect", team, "--events", "--json")
    assert json.loads(inspected.stdout)["event_count"] > 4  # nothing deleted


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--at", "0"], 2, "out of range"),
        (["--at", "100000"], 2, "out of range"),
    ],
)
def test_a_bad_fork_point_is_one_line_and_creates_nothing(
    run_cli: Run, team: str, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    with _store(tmp_path) as store:
        before = store.stored_team_ids()
    done = run_cli("team", "fork", team, *args)
    assert done.returncode == code
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    with _store(tmp_path) as store:
        assert store.stored_team_ids() == before


def test_an_unknown_or_half_deleted_team_is_one_line_and_creates_nothing(
    run_cli: Run, team: str, tmp_path: Path
) -> None:
    unknown = run_cli("team", "fork", "00000000-0000-4000-8000-000000000000", "--at", "1")
    assert unknown.returncode == 1 and "not found" in unknown.stderr
    with _store(tmp_path) as store:
        process = store.load_team(UUID(team))
        assert process is not None
        # Half-deleted: the record is gone, the events remain.
        with store._transaction() as cur:
            cur.execute("DELETE FROM teams WHERE team_id = ?", (team,))
        before = store.stored_team_ids()
    half = run_cli("team", "fork", team, "--at", "1")
    assert half.returncode == 1 and "half-deleted" in half.stderr
    assert len(half.stderr.strip().splitlines()) == 1
    with _store(tmp_path) as store:
        assert store.stored_team_ids() == before
