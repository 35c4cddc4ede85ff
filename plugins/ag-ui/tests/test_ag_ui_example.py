"""examples/ag_ui_client.py, run as a program against a served team, prints the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "ag_ui_client.py"


def _run(served: Any, *args: str) -> list[str]:
    env = {**os.environ, "AKGENTIC_CONSOLE_TOKEN": served.server.token}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), served.server.url, served.team_id, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_example_client_prints_the_events_of_a_run(served: Any) -> None:
    lines = _run(served, "hello from the example")
    kinds = [line.split()[1] for line in lines]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert any("TEXT_MESSAGE_CONTENT delta='Echo: hello from the example'" in x for x in lines)


def test_the_example_client_answers_the_question_its_run_ends_on(served: Any) -> None:
    lines = _run(served, "please ask me", "--answer", "green")
    finished = [line for line in lines if " RUN_FINISHED " in line]
    assert len(finished) == 2 and "'interrupt'" in finished[0]
    assert any("delta='Noted: green'" in line for line in lines)
