"""``akgentic sandbox check --backend docker`` against the private engine."""

from __future__ import annotations

import os
import subprocess
import sys


def test_sandbox_check_shows_every_probe_contained_on_docker() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "sandbox", "check", "--backend", "docker"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every probe was contained" in done.stdout
    assert "NOT CONTAINED" not in done.stdout
