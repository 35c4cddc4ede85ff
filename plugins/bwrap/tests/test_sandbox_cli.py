"""``akgentic sandbox check`` and ``run`` on bubblewrap, as real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("needs_bwrap")


def akgentic(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        check=False,
    )


def test_sandbox_check_shows_every_probe_contained_on_bwrap() -> None:
    done = akgentic("sandbox", "check", "--backend", "bwrap")
    assert done.returncode == 0, done.stdout + done.stderr
    for probe in ("write-outside", "read-secrets", "network", "remount", "fork-bomb",
                  "fill-disk", "flood-100MB", "ignore-sigterm", "setuid", "devices",
                  "host-paths"):  # fmt: skip
        line = next(row for row in done.stdout.splitlines() if probe in row)
        assert "contained" in line and "NOT" not in line
    assert "every probe was contained" in done.stdout


def test_sandbox_check_of_an_unknown_backend_exits_2() -> None:
    done = akgentic("sandbox", "check", "--backend", "nope")
    assert done.returncode == 2 and "no sandbox backend named 'nope'" in done.stderr


def test_sandbox_run_passes_the_command_literally_and_exits_with_its_code() -> None:
    done = akgentic("sandbox", "run", "--backend", "bwrap", "--", "sh", "-c", "echo $0 hi; exit 7")
    assert (done.returncode, done.stdout) == (7, "sh hi\n")


def test_sandbox_run_reports_a_timeout_with_124() -> None:
    done = akgentic("sandbox", "run", "--timeout", "1", "--", "sleep", "30")
    assert done.returncode == 124 and "timed out" in done.stderr


def test_sandbox_run_without_any_usable_backend_fails_saying_what_to_install(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = akgentic(
        "sandbox", "run", "--", "echo", "hi",
        env={"PATH": str(empty), "DOCKER_HOST": f"unix://{tmp_path}/none.sock"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "apt install bubblewrap" in done.stderr and "hi" not in done.stdout
