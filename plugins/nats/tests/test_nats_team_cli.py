"""``akgentic team create|send|where|list|stop|resume|delete --cluster nats://...``.

Real ``akgentic`` subprocesses talk to real worker subprocesses over the
machine's NATS; PostgreSQL is the store the workers share. What a command
prints with ``--cluster`` is compared with what the one-machine command
prints on that same store (``--store``): the same lines, the same columns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.testing.cards import entry_echo_team_yaml
from akgentic.testing.runtime_contract import Fleet

Run = Callable[..., subprocess.CompletedProcess[str]]

CARD = entry_echo_team_yaml(
    "fleet-cli-team",
    "akgentic.testing.cluster_team.QuietAgent",
    member_name="@Quiet",
    metadata_type="akgentic.testing.cluster_team.QuietMetadata",
)


@pytest.fixture
def card_file(tmp_path: Path) -> Path:
    path = tmp_path / "card.yaml"
    path.write_text(CARD)
    return path


@pytest.fixture
def akgentic(tmp_path: Path) -> Run:
    """``akgentic(*args, env={...})``: the real CLI in a subprocess, no cluster or store set."""
    base = {k: v for k, v in os.environ.items() if k not in ("AKGENTIC_CLUSTER", "AKGENTIC_STORE")}

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "akgentic.cli", *args],
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            cwd=tmp_path,
            timeout=180,
        )

    return run


def test_the_team_lifecycle_on_a_fleet_prints_what_one_machine_prints(
    cluster_url: str, store_url: str, worker_fleet: Fleet, card_file: Path, akgentic: Run
) -> None:
    run = akgentic
    worker_fleet.ensure(2)
    tenant = f"t{uuid4().hex[:8]}"
    on_fleet = {"AKGENTIC_CLUSTER": cluster_url}

    def fleet(*args: str) -> subprocess.CompletedProcess[str]:
        done = run("team", *args, env=on_fleet)
        assert done.returncode == 0, done.stderr
        return done

    def here(*args: str) -> subprocess.CompletedProcess[str]:
        done = run("team", *args, "--store", store_url)
        assert done.returncode == 0, done.stderr
        return done

    def where(team_id: str) -> dict[str, object]:
        return dict(json.loads(fleet("where", team_id).stdout))

    created = run(
        "team",
        "create",
        str(card_file),
        "--metadata",
        f"tenant={tenant}",
        "--send",
        "first words",
        "--cluster",
        cluster_url,
    )
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip()
    assert str(UUID(team_id)) == team_id  # one line: the id, as on one machine
    placed = where(team_id)
    assert placed["status"] == "running" and placed["worker"] in worker_fleet.names()

    ack = json.loads(fleet("send", team_id, "more words", "--key", "cli-k1").stdout)
    assert ack["team_id"] == team_id and ack["worker"] == placed["worker"]
    events = [json.loads(line) for line in fleet("events", team_id).stdout.splitlines()]
    said = [e["summary"] for e in events if e["type"] == "SentMessage"]
    assert any("first words" in s for s in said) and any("more words" in s for s in said)

    for form in ([], ["--json"], ["--status", "running", "--json"]):
        listed = fleet("list", "--metadata", f"tenant={tenant}", *form).stdout
        assert listed == here("list", "--metadata", f"tenant={tenant}", *form).stdout
    rows = json.loads(fleet("list", "--metadata", f"tenant={tenant}", "--json").stdout)
    assert [(r["team_id"], r["status"], r["name"]) for r in rows] == [
        (team_id, "running", "fleet-cli-team")
    ]
    assert rows[0]["metadata"] == {"tenant": tenant, "note": ""}
    table = fleet("list", "--metadata", f"tenant={tenant}").stdout
    assert "teams (1)" in table and team_id in table and f"tenant={tenant}" in table

    assert fleet("stop", team_id).stdout == f"team {team_id} stopped\n"
    assert where(team_id) == {
        "team_id": team_id,
        "status": "stopped",
        "worker": None,
        "epoch": None,
    }
    stopped = fleet("list", "--status", "stopped", "--metadata", f"tenant={tenant}", "--json")
    assert [r["team_id"] for r in json.loads(stopped.stdout)] == [team_id]
    assert (
        stopped.stdout
        == here("list", "--status", "stopped", "--metadata", f"tenant={tenant}", "--json").stdout
    )

    resumed = fleet("resume", team_id, "--send", "after the resume")
    assert resumed.stdout == f"{team_id}\n"
    assert where(team_id)["worker"] in worker_fleet.names()
    again = json.loads(fleet("send", team_id, "more words", "--key", "cli-k1").stdout)
    assert again["duplicate"] and again["sequence"] == ack["sequence"]

    assert fleet("delete", team_id).stdout == f"team {team_id} deleted\n"
    assert json.loads(fleet("list", "--metadata", f"tenant={tenant}", "--json").stdout) == []
    gone = run("team", "where", team_id, env=on_fleet)
    assert gone.returncode == 1 and "not found" in gone.stderr
    for command in (["stop", team_id], ["delete", team_id], ["resume", team_id]):
        refused = run("team", *command, env=on_fleet)
        assert refused.returncode == 1 and refused.stdout == ""
        assert refused.stderr.strip().splitlines() == [f"error: team {team_id} not found"]


def test_options_that_need_the_team_here_are_refused_on_a_fleet_before_anything_is_placed(
    cluster_url: str, store_url: str, worker_fleet: Fleet, card_file: Path, akgentic: Run
) -> None:
    run = akgentic
    worker_fleet.ensure(1)
    tenant = f"t{uuid4().hex[:8]}"
    script = card_file.with_name("script.yaml")
    script.write_text("[]\n")
    for extra in (["--interactive"], ["--scripted", str(script)]):
        done = run(
            "team",
            "create",
            str(card_file),
            "--metadata",
            f"tenant={tenant}",
            "--cluster",
            cluster_url,
            *extra,
        )
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    bad = run("team", "create", str(card_file), "--metadata", "nope=1", "--cluster", cluster_url)
    assert bad.returncode == 2 and "--metadata" in bad.stderr
    listed = run("team", "list", "--metadata", f"tenant={tenant}", "--json", "--store", store_url)
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
