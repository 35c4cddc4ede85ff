"""docs/time-travel.md: the worked example runs and prints what its trailing comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "time-travel.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)


def expected_output(block: str) -> list[str]:
    lines = block.rstrip().splitlines()
    tail: list[str] = []
    while lines and lines[-1].startswith("# "):
        tail.insert(0, lines.pop()[2:])
    return tail


def test_the_worked_example_forks_a_coding_team_and_both_trees_keep_their_history(
    tmp_path: Path,
) -> None:
    [block] = BLOCKS
    assert len(expected_output(block)) == 3
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "AKGENTIC_MODEL")}
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == expected_output(block)
