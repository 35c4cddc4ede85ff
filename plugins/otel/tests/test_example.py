"""docs/observability.md's walk-through, as written: an offline team, then its trace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_the_example_exports_the_trace_of_the_documented_team(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/akgentic.db"
    created = cli(
        "team",
        "create",
        str(EXAMPLES / "observability-team.yaml"),
        "--scripted",
        str(EXAMPLES / "observability-script.yaml"),
        "--send",
        "@Manager find facts",
        "--store",
        store,
    )
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip().splitlines()[-1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AKGENTIC_", "OTEL_"))}
    shown = subprocess.run(
        [sys.executable, str(EXAMPLES / "otel_trace.py"), team_id, store],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("trace ") and len(lines[0].split()[1]) == 32
    assert lines[1].startswith("  invoke_workflow observability-team")
    assert lines[2].startswith("    invoke_agent @Manager  [")
    assert any(line.startswith("      execute_tool update_planning") for line in lines)
    assert any(line.startswith("      invoke_agent @Researcher") for line in lines)
    assert any(line.startswith("        invoke_agent @Manager") for line in lines)
    chats = [line for line in lines if line.strip().startswith("chat ")]
    assert len(chats) == 4 and all("gen_ai.usage.input_tokens=" in c for c in chats)


def test_the_example_reports_a_bad_team_id_on_one_line(tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, str(EXAMPLES / "otel_trace.py"), "nope", f"sqlite:///{tmp_path}/a.db"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 2
    assert shown.stderr.strip() == "error: 'nope' is not a team id (a UUID)"
