"""The example scripts that docs/teams.md quotes, run on each built-in store."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

STORES = ["sqlite:///{tmp}/ex.db", "yaml:///{tmp}/ex-teams"]


def run(examples: Path, script: str, *args: str, cwd: Path) -> str:
    result = subprocess.run(
        [sys.executable, str(examples / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("store", STORES)
def test_the_quick_start_prints_the_echoes_before_and_after_the_resume(
    store: str, examples_dir: Path, tmp_path: Path
) -> None:
    out = run(examples_dir, "quickstart.py", store.format(tmp=tmp_path), cwd=tmp_path)
    assert out.splitlines() == ["Echo: Hello!", "Echo: Back!"]


@pytest.mark.parametrize("store", STORES)
def test_the_create_stop_resume_and_delete_scripts_chain_on_one_store(
    store: str, examples_dir: Path, tmp_path: Path
) -> None:
    url = store.format(tmp=tmp_path)
    created = run(examples_dir, "create_team.py", url, cwd=tmp_path).splitlines()
    assert created[0] == "Echo: Hello from create_team.py"
    team_id = created[-1]
    resumed = run(examples_dir, "resume_team.py", team_id, "Hello again", url, cwd=tmp_path)
    assert resumed.splitlines() == ["Echo: Hello again"]
    assert run(examples_dir, "stop_team.py", team_id, url, cwd=tmp_path).strip() == "stopped"
    assert run(examples_dir, "delete_team.py", team_id, url, cwd=tmp_path).strip() == "deleted"


@pytest.mark.parametrize("store", STORES)
def test_the_one_owner_example_refuses_the_second_manager_until_the_first_stops(
    store: str, examples_dir: Path, tmp_path: Path
) -> None:
    out = run(examples_dir, "one_owner.py", store.format(tmp=tmp_path), cwd=tmp_path)
    assert out.splitlines() == ["refused: True", "epoch: 2"]


def test_the_yaml_card_runs_with_the_cli(examples_dir: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable, "-m", "akgentic.cli.team_cmd", "team", "create",
            str(examples_dir / "echo-team.yaml"), "--send", "Hello!", "--no-interactive",
            "--store", f"sqlite:///{tmp_path}/cli.db",
        ],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Echo: Hello!"


@pytest.mark.parametrize("store", STORES)
def test_the_virtual_teams_example_passivates_and_wakes_its_team(
    store: str, examples_dir: Path, tmp_path: Path
) -> None:
    out = run(examples_dir, "virtual_teams.py", store.format(tmp=tmp_path), cwd=tmp_path)
    assert out.splitlines() == [
        "Echo: Hello!",
        "passivated",
        "Echo: Still there?",
        "running",
        "Echo: By id",
    ]


def test_the_virtual_teams_page_quotes_its_example_as_it_is(examples_dir: Path) -> None:
    page = (examples_dir.parent / "docs" / "virtual-teams.md").read_text(encoding="utf-8")
    block = page.split("# examples/virtual_teams.py (excerpt)\n", 1)[1].split("```", 1)[0]
    source = (examples_dir / "virtual_teams.py").read_text(encoding="utf-8")
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    assert lines and all(line in source for line in lines), [
        line for line in lines if line not in source
    ]
