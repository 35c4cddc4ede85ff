"""FakeSandboxBackend: the contract's mechanics without isolation, for tests only."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.sandbox import ResourceLimits, SandboxError, resolve_sandbox_backend
from akgentic.testing import FakeSandboxBackend


@pytest.fixture
def fake(tmp_path: Path) -> FakeSandboxBackend:
    backend = FakeSandboxBackend()
    backend.prepare(tmp_path, limits=ResourceLimits(output_bytes=4096), timeout_s=1)
    return backend


def test_it_runs_argv_literally_in_the_tree_with_a_fresh_environment(
    fake: FakeSandboxBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_FAKE_SECRET", "s3cret")
    (tmp_path / "sub").mkdir()
    result = fake.run(["sh", "-c", "pwd; env"], cwd="sub", env={"X": "1"}, timeout_s=10)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{tmp_path / 'sub'}\n")
    assert "X=1" in result.stdout and "s3cret" not in result.stdout
    assert fake.runs == [["sh", "-c", "pwd; env"]]


def test_a_timeout_kills_the_group_and_keeps_partial_output(fake: FakeSandboxBackend) -> None:
    begin = time.monotonic()
    result = fake.run(["sh", "-c", "echo early; sleep 30 & sleep 30"], cwd="", env={}, timeout_s=1)
    assert time.monotonic() - begin < 10
    assert (result.exit_code, result.timed_out, result.stdout) == (124, True, "early\n")


def test_output_is_bounded_and_kill_from_another_thread_ends_a_run(
    fake: FakeSandboxBackend,
) -> None:
    assert fake.run(
        ["sh", "-c", "yes | head -c 100000"], cwd="", env={}, timeout_s=10
    ).stdout_truncated
    timer = threading.Timer(0.5, fake.kill)
    timer.start()
    result = fake.run(["sleep", "30"], cwd="", env={}, timeout_s=30)
    timer.join()
    assert result.killed and result.exit_code == 137


def test_it_is_chosen_only_by_name_once_a_test_registers_it(
    register_plugin: Callable[..., Any],
) -> None:
    register_plugin(FakeSandboxBackend.plugin(), "fake-sandbox")
    assert resolve_sandbox_backend("fake", environ={}).name == "fake"
    with pytest.raises(SandboxError):
        resolve_sandbox_backend(environ={})
