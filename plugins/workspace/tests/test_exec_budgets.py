"""Exec budgets and reclaimed runs (spec §6.2, §6.3, §12.40-41).

* The run budget is timed from the command's actual start: a slow ``prepare`` (a cold
  start) does not eat into it, and the caller's default wait is re-based with it.
* A run whose lease is gone commits nothing; what it wrote is committed as
  ``out-of-band`` by the next change, whether the lease went with a teardown or with
  the death of the process that held it.

The backend is the unisolated test backend (real subprocesses in the tree), registered
for these tests only; a subclass gives it a slow cold start.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace import WorkspaceExec

from akgentic.plugins import PluginInfo, SandboxBackendSpec, hookimpl
from akgentic.sandbox import ResourceLimits
from akgentic.testing import FakeSandboxBackend, wait_until

Make = Callable[..., Any]
COLD_START_S = 1.5


class SlowStartBackend(FakeSandboxBackend):
    """The test backend with a cold start of :data:`COLD_START_S` (an image pull, a boot)."""

    name = "slow-start"
    #: Cold starts paid, over every instance (the test resets it).
    cold_starts = 0

    def prepare(self, tree: Path, *, limits: ResourceLimits, timeout_s: float) -> None:
        SlowStartBackend.cold_starts += 1
        threading.Event().wait(COLD_START_S)  # the work a real backend does on first use
        super().prepare(tree, limits=limits, timeout_s=timeout_s)


class _Backends:
    @hookimpl
    def akgentic_sandbox_backends(self) -> Iterable[SandboxBackendSpec]:
        return [
            SandboxBackendSpec(name="fake", factory=FakeSandboxBackend, isolation="none"),
            SandboxBackendSpec(name="slow-start", factory=SlowStartBackend, isolation="none"),
        ]


@pytest.fixture(autouse=True)
def _backends(register_plugin: Callable[..., PluginInfo]) -> None:
    from akgentic_workspace import plugin

    register_plugin(plugin, "workspace")
    register_plugin(_Backends(), "budget-test-backends")


@pytest.fixture
def tree(workspaces_root: Path) -> Path:
    return workspaces_root / "alice" / "_id" / "p"


def _log(tree: Path) -> list[str]:
    return subprocess.run(
        ["git", f"--git-dir={tree.with_name('p.git')}", "log", "--format=%an|%s"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip


def _files(tree: Path, rev: str) -> list[str]:
    return subprocess.run(
        ["git", f"--git-dir={tree.with_name('p.git')}", "show", "--name-only", "--format=", rev],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip


def test_a_cold_start_does_not_count_against_the_run_budget(make_agent: Make) -> None:
    # Budget 1 s, cold start 1.5 s, command 0.6 s: timed from the start of prepare the
    # command would be killed before it began; timed from its own start it finishes.
    a = make_agent(workspace_exec=WorkspaceExec(backend="slow-start", timeout_s=1.0))
    SlowStartBackend.cold_starts = 0
    began = time.monotonic()
    out = a.exec("bash -c 'sleep 0.6; echo finished'")
    took = time.monotonic() - began
    assert "exit_code: 0 (OK)" in out, out
    assert "finished" in out
    assert took >= COLD_START_S + 0.6  # the caller waited through the cold start too
    # Warm now: the same command in the same budget, without the cold start.
    assert "exit_code: 0 (OK)" in a.exec("bash -c 'sleep 0.6; echo again'")
    assert SlowStartBackend.cold_starts == 1


def test_after_a_cold_start_the_budget_still_stops_a_long_command(make_agent: Make) -> None:
    a = make_agent(workspace_exec=WorkspaceExec(backend="slow-start", timeout_s=1.0))
    began = time.monotonic()
    out = a.exec("bash -c 'echo started; sleep 30'")
    took = time.monotonic() - began
    assert "exit_code: 124 (TIMED OUT)" in out and "started" in out
    assert took < COLD_START_S + 1.0 + 2.5  # cold start + budget + margin, not 30 s


def test_a_torn_down_runs_writes_are_committed_out_of_band_next(
    make_agent: Make, tree: Path
) -> None:
    a = make_agent(
        "@A", git_journal=True, workspace_exec=WorkspaceExec(backend="fake", poll_attempts=0)
    )
    handed = a.exec("bash -c 'echo late > late.txt; sleep 30'")
    run_id = handed.split()[1]
    wait_until(lambda: (tree / "late.txt").is_file(), timeout=10)
    a.card._exec_local.close()  # teardown: the run is killed and its lease released
    assert a.exec_result(run_id).startswith(f"Run {run_id} - exit_code:")  # still collectable
    assert not any("exec:" in row for row in _log(tree))  # the report committed nothing
    b = make_agent("@B", git_journal=True)
    assert b.write("b.txt", "b") == "Written: b.txt"
    rows = _log(tree)
    assert rows[:2] == [
        "@B|write: b.txt",
        "out-of-band|out-of-band: changes from outside the tools",
    ]
    assert _files(tree, "HEAD~1") == ["late.txt"]
    assert _files(tree, "HEAD") == ["b.txt"]


HOLDER = textwrap.dedent(
    """
    import fcntl, json, os, signal, sys, time
    lease, tree = sys.argv[1], sys.argv[2]
    fd = os.open(lease, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.pwrite(fd, json.dumps({"run_id": "dead0001", "agent_name": "@Gone",
                              "started_at": time.time(), "budget_s": 15}).encode(), 0)
    with open(os.path.join(tree, "from-dead-run.txt"), "w") as out:
        out.write("written by a run whose process died\\n")
    print("held", flush=True)
    signal.pause()  # hold the lease until the test kills this process
    """
)


def test_a_dead_holders_files_are_committed_out_of_band_by_the_next_run(
    make_agent: Make, tree: Path, workspaces_root: Path
) -> None:
    a = make_agent("@A", git_journal=True, workspace_exec=WorkspaceExec(backend="fake"))
    lease = tree.with_name("p.index") / "exec.lock"
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lease), str(tree)], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            assert "another command is running" in a.exec("echo blocked")
        finally:
            holder.kill()
            holder.wait(timeout=10)
    began = time.monotonic()
    out = a.exec("bash -c 'echo mine > mine.txt'")
    assert "exit_code: 0 (OK)" in out
    assert time.monotonic() - began < 5  # admitted at once: the kernel freed the lock
    rows = _log(tree)
    assert rows[0].startswith("@A|exec: mine.txt")
    assert rows[1] == "out-of-band|out-of-band: changes from outside the tools"
    assert _files(tree, "HEAD~1") == ["from-dead-run.txt"]
    assert _files(tree, "HEAD") == ["mine.txt"]
