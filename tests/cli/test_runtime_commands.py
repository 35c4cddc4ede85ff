"""``akgentic team send|events|where`` on the local runtime, in real subprocesses."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from akgentic.cluster import connect
from akgentic.testing.cluster_team import quiet_team_card

Run = Callable[..., subprocess.CompletedProcess[str]]


def _stopped_team(store: str) -> str:
    client = connect("local:", store=store)
    try:
        team_id = client.create(quiet_team_card())
    finally:
        client.close()  # stops the team: the commands below resume it on demand
    return str(team_id)


def test_send_events_and_where_reach_a_team_through_the_local_runtime(
    run_module: Run, cli_env: dict[str, str], tmp_path: Path
) -> None:
    team_id = _stopped_team(cli_env["AKGENTIC_STORE"])
    sent = run_module("akgentic.cli", "team", "send", team_id, "hello", "--key", "k1")
    assert sent.returncode == 0, sent.stderr
    ack = json.loads(sent.stdout)
    assert ack["team_id"] == team_id and ack["sequence"] > 0 and not ack["duplicate"]
    again = run_module("akgentic.cli", "team", "send", team_id, "hello", "--key", "k1")
    assert json.loads(again.stdout)["sequence"] == ack["sequence"]
    assert json.loads(again.stdout)["duplicate"] is True

    shown = run_module(
        "akgentic.cli", "team", "events", team_id, "--from-sequence", str(ack["sequence"])
    )
    assert shown.returncode == 0, shown.stderr
    lines = [json.loads(line) for line in shown.stdout.splitlines()]
    assert lines[0]["sequence"] == ack["sequence"] and lines[0]["type"] == "SentMessage"
    assert "hello" in lines[0]["summary"]

    where = run_module("akgentic.cli", "team", "where", team_id, "--cluster", "local:")
    assert where.returncode == 0, where.stderr
    assert json.loads(where.stdout)["status"] == "stopped"


def test_send_to_an_unknown_team_or_on_a_missing_store_fails_with_exit_code_1(
    run_module: Run, cli_env: dict[str, str], tmp_path: Path
) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    done = run_module("akgentic.cli", "team", "send", unknown, "anyone?")
    assert done.returncode == 1 and f"no store at {tmp_path / 'cli.db'}" in done.stderr
    assert not (tmp_path / "cli.db").exists()
    _stopped_team(cli_env["AKGENTIC_STORE"])
    done = run_module("akgentic.cli", "team", "send", unknown, "anyone?")
    assert done.returncode == 1 and "not found" in done.stderr
