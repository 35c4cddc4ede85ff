"""``akgentic store check`` / ``repair`` where the teams' agent classes do not import.

The team is created by examples/create_team.py, run next to ``echo_team.py``;
the CLI then runs from a directory whose cwd and PYTHONPATH do not hold that
module. The healthy team must be reported healthy, with one line saying its
classes do not import here; only the real orphan is a fault, and ``repair``
removes it and exits 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.team.urls import open_event_store
from akgentic.testing.event_store_fixtures import contract_event

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _akgentic(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("AKGENTIC_STORE", None)
    assert not any(Path(p).resolve() == EXAMPLES for p in env.get("PYTHONPATH", "").split(":") if p)
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("scheme", ["sqlite", "yaml"])
def test_check_and_repair_do_not_need_the_teams_agent_classes(scheme: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/store.db" if scheme == "sqlite" else f"yaml:///{tmp_path}/teams"
    created = subprocess.run(
        [sys.executable, "create_team.py", url],
        capture_output=True,
        text=True,
        cwd=EXAMPLES,
        timeout=120,
        check=True,
    )
    team_id = created.stdout.strip().splitlines()[-1]
    orphan = uuid4()
    store = open_event_store(url)
    try:
        store.save_event(contract_event(orphan, 1))
    finally:
        store.close()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    check = _akgentic(elsewhere, "store", "check", url)
    assert check.returncode == 1, check.stdout + check.stderr  # the orphan, only
    healthy = [line for line in check.stdout.splitlines() if team_id in line]
    assert healthy and healthy[0].startswith("ok "), check.stdout
    assert "echo-team" in healthy[0]
    assert "no record" not in healthy[0]
    notes = [line for line in check.stdout.splitlines() if "echo_team.EchoAgent" in line]
    assert len(notes) == 1 and "do not import" in notes[0], check.stdout
    assert "validation error" not in check.stdout and "errors.pydantic" not in check.stdout
    assert "1 team(s) with problems" in check.stdout

    repair = _akgentic(elsewhere, "store", "repair", url)
    assert repair.returncode == 0, repair.stdout + repair.stderr
    assert f"removed orphan {orphan}" in repair.stdout
    assert "needs a person" not in repair.stdout

    again = _akgentic(elsewhere, "store", "check", url)
    assert again.returncode == 0, again.stdout
    assert "no problem found" in again.stdout


def test_a_record_that_does_not_parse_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    from akgentic.team.stores.check import check_store
    from akgentic.testing.event_store_fixtures import contract_process

    url = f"yaml:///{tmp_path}/teams"
    store = open_event_store(url)
    try:
        team_id = uuid4()
        store.save_team(contract_process(team_id))
        store.save_event(contract_event(team_id, 1))
        (tmp_path / "teams" / str(team_id) / "team.yaml").write_text("{{{: [\n")
        [team] = check_store(store).teams
    finally:
        store.close()
    assert not team.ok and not team.orphan
    assert team.events == 1
    assert any("not valid YAML" in problem for problem in team.problems)
