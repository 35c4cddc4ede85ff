"""The ``akgentic team`` / ``akgentic store`` commands, run as real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.team import SqliteEventStore, TeamStatus
from akgentic.testing.cards import entry_echo_team_yaml

Run = Callable[..., subprocess.CompletedProcess[str]]

CARD = entry_echo_team_yaml(
    "cli-team", "team_test_agents.Echo", metadata_type="team_test_agents.CaseMetadata"
)


@pytest.fixture
def card_file(tmp_path: Path) -> Path:
    path = tmp_path / "card.yaml"
    path.write_text(CARD)
    return path


def db(tmp_path: Path) -> Path:
    return tmp_path / "cli.db"


def status(tmp_path: Path, team_id: str) -> Any:
    from uuid import UUID

    with SqliteEventStore(db(tmp_path)) as store:
        process = store.load_team(UUID(team_id))
        return None if process is None else process.status


def test_create_list_inspect_resume_and_delete_a_team(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    created = run_cli(
        "team",
        "create",
        str(card_file),
        "--metadata",
        "tenant=acme",
        "--send",
        "hi",
        "--no-interactive",
    )
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip().splitlines()[-1]
    assert "@Entry -> @Echo: hi" in created.stderr
    listed = run_cli("team", "list", "--metadata", "tenant=acme", "--json")
    assert [row["team_id"] for row in json.loads(listed.stdout)] == [team_id]
    assert json.loads(run_cli("team", "list", "--metadata", "tenant=other", "--json").stdout) == []
    resumed = run_cli("team", "resume", team_id, "--send", "again", "--no-interactive")
    assert resumed.returncode == 0, resumed.stderr
    inspected = json.loads(run_cli("team", "inspect", team_id, "--events", "--json").stdout)
    assert inspected["status"] == "stopped"
    assert sorted(m["name"] for m in inspected["roster"]) == ["@Echo", "@Entry", "@Orchestrator"]
    texts = [e["summary"] for e in inspected["events"] if e["type"] == "SentMessage"]
    assert texts == ["UserMessage -> @Echo: hi", "UserMessage -> @Echo: again"]
    assert [e["sequence"] for e in inspected["events"]] == list(
        range(1, inspected["event_count"] + 1)
    )
    deleted = run_cli("team", "delete", team_id)
    assert deleted.returncode == 0, deleted.stderr
    assert status(tmp_path, team_id) is None


def test_cluster_local_is_the_one_machine_form_and_an_unknown_runtime_is_invalid_input(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    local = ["--cluster", "local:"]
    created = run_cli(
        "team", "create", str(card_file), "--metadata", "tenant=acme", "--send", "hi",
        "--no-interactive", *local,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip().splitlines()[-1]
    assert "@Entry -> @Echo: hi" in created.stderr  # ran here, as without --cluster
    assert status(tmp_path, team_id) == TeamStatus.STOPPED
    listed = run_cli("team", "list", "--json", *local)
    assert listed.stdout == run_cli("team", "list", "--json").stdout
    assert [row["team_id"] for row in json.loads(listed.stdout)] == [team_id]
    assert run_cli("team", "delete", team_id, *local).stdout == f"team {team_id} deleted\n"
    for command in (["list"], ["create", str(card_file), "--no-interactive"], ["stop", team_id]):
        refused = run_cli("team", *command, "--cluster", "ray://head:10001")
        assert refused.returncode == 2 and refused.stdout == ""
        assert "ray" in refused.stderr and "local" in refused.stderr


def test_a_malformed_card_lists_every_problem_with_its_line_and_creates_nothing(
    run_cli: Run, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        CARD.replace(
            "team_test_agents.Echo\n    description: entry", "nowhere.Agent\n    description: entry"
        ).replace("role: Echo}", 'role: ""}')
    )
    result = run_cli("team", "create", str(bad), "--no-interactive")
    assert result.returncode == 2
    assert "entry_point.card" in result.stderr and "line 4" in result.stderr
    assert "members[0].card" in result.stderr
    assert not db(tmp_path).exists()


def test_an_unknown_store_scheme_is_a_clear_error_and_creates_nothing(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    result = run_cli("team", "create", str(card_file), "--store", "nosuch:///x", "--no-interactive")
    assert result.returncode == 2
    assert "nosuch" in result.stderr and "sqlite" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.yaml"]
    assert run_cli("store", "init", "nosuch:///x").returncode == 2


def test_metadata_failing_validation_is_refused_before_anything_is_written(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    result = run_cli(
        "team", "create", str(card_file), "--metadata", "priority=urgent", "--no-interactive"
    )
    assert result.returncode == 2
    assert "tenant" in result.stderr and "priority" in result.stderr
    assert not db(tmp_path).exists()


def test_resuming_or_deleting_a_team_another_live_process_runs_is_refused_and_changes_nothing(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    from uuid import UUID

    from akgentic.team.models import TeamOwner

    team_id = run_cli("team", "create", str(card_file), "--no-interactive").stdout.split()[-1]
    with SqliteEventStore(db(tmp_path)) as store:
        # This test process plays a live owner that cannot be signalled (an embedding app).
        claimed = store.claim_team(UUID(team_id), TeamOwner.current("test-owner"))
        store.save_team(claimed.with_status(TeamStatus.RUNNING), epoch=claimed.epoch)
        before = (store.load_team(UUID(team_id)), store.load_events(UUID(team_id)))
        resumed = run_cli("team", "resume", team_id, "--no-interactive")
        assert resumed.returncode == 1
        assert f"is running in process {os.getpid()}" in resumed.stderr
        assert "Traceback" not in resumed.stderr
        deleted = run_cli("team", "delete", team_id)
        assert deleted.returncode == 1
        assert "stop it first" in deleted.stderr
        stopped = run_cli("team", "stop", team_id)
        assert stopped.returncode == 1
        assert "cannot be asked to stop" in stopped.stderr
        assert (store.load_team(UUID(team_id)), store.load_events(UUID(team_id))) == before
    # The owner is gone now (its store closed): stop fences it out and records it stopped.
    assert run_cli("team", "stop", team_id).returncode == 0
    assert status(tmp_path, team_id) == TeamStatus.STOPPED


def test_interactive_mode_sends_stdin_lines_and_stops_at_end_of_input(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    result = run_cli("team", "create", str(card_file), "--interactive", stdin="one\ntwo\n")
    assert result.returncode == 0, result.stderr
    team_id = result.stdout.strip().splitlines()[-1]
    assert status(tmp_path, team_id) == TeamStatus.STOPPED


def test_ctrl_c_in_interactive_mode_stops_the_team_cleanly(
    cli_env: dict[str, str], card_file: Path, tmp_path: Path
) -> None:
    # ``with`` closes the child's pipes once it is reaped, however the test ends.
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "akgentic.cli.team_cmd",
            "team",
            "create",
            str(card_file),
            "--interactive",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env,
        cwd=tmp_path,
    ) as child:
        try:
            assert child.stdin is not None and child.stderr is not None
            for line in child.stderr:
                if "running; type messages" in line:
                    break
            child.stdin.write("hello\n")
            child.stdin.flush()
            os.kill(child.pid, signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
    assert child.returncode == 0, err
    team_id = out.strip().splitlines()[-1]
    assert status(tmp_path, team_id) == TeamStatus.STOPPED


def test_store_init_creates_the_store_and_list_of_a_missing_store_creates_nothing(
    run_cli: Run, tmp_path: Path
) -> None:
    listed = run_cli("team", "list", "--json")
    assert listed.returncode == 1 and listed.stdout == ""
    assert f"no store at {db(tmp_path)}" in listed.stderr
    assert not db(tmp_path).exists()
    assert run_cli("store", "init", f"yaml:///{tmp_path}/teams").returncode == 0
    assert (tmp_path / "teams").is_dir()
    listed = run_cli("team", "list", "--json", "--store", f"yaml:///{tmp_path}/teams")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


ANY_TEAM = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize("url", ["sqlite:///typo/path.db", "yaml:///nonexistent"])
@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["list", "--json"],
        ["inspect", ANY_TEAM],
        ["events", ANY_TEAM],
        ["where", ANY_TEAM],
        ["send", ANY_TEAM, "hello"],
        ["stop", ANY_TEAM],
        ["delete", ANY_TEAM],
        ["resume", ANY_TEAM, "--no-interactive"],
    ],
)
def test_a_command_on_a_mistyped_store_says_it_does_not_exist_and_creates_nothing(
    run_cli: Run, tmp_path: Path, url: str, command: list[str]
) -> None:
    before = sorted(tmp_path.iterdir())
    done = run_cli("team", *command, "--store", url)
    missing = tmp_path / url.split(":///", 1)[1]
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"no store at {missing}" in lines[0], done.stderr
    assert sorted(tmp_path.iterdir()) == before  # no store file or directory made
