"""``akgentic sandbox run --timeout`` refuses what is not a usable number of seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1", "0", "1e308"])
def test_an_impossible_timeout_is_one_error_line_and_exit_2(tmp_path: Path, value: str) -> None:
    marker = tmp_path / "ran"
    done = subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "sandbox", "run", "--timeout", value,
         "--", "touch", str(marker)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --timeout"), done.stderr
    assert not marker.exists()
