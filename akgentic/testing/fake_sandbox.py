"""FakeSandboxBackend: runs commands as plain host subprocesses — NO isolation.

For tests of code that *uses* a sandbox (the workspace's exec flow) on hosts where no
real backend runs. It honours the contract's mechanics — argv without a shell, ``cwd``
relative to the tree, the fresh environment, bounded output, timeouts that kill the
whole process group with exit code 124 — but contains nothing: a command can read and
write anything the test process can. It is never registered by a plugin; a test
registers it explicitly::

    register_plugin(FakeSandboxBackend.plugin(), "fake-sandbox")   # backend "fake"
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from akgentic.plugins import SandboxBackendSpec, hookimpl
from akgentic.sandbox import (
    TIMEOUT_EXIT_CODE,
    ExecResult,
    ResourceLimits,
    SandboxError,
    StreamCapture,
    base_environment,
    sandbox_cwd,
)
from akgentic.sandbox.backend import MOUNT_POINT
from akgentic.sandbox.capture import pump_pipes

__all__ = ["FakeSandboxBackend"]


class FakeSandboxBackend:
    """An unisolated stand-in backend named ``fake`` (see the module docstring)."""

    name = "fake"

    def __init__(self) -> None:
        self._tree: Path | None = None
        self._limits = ResourceLimits()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._killed = False
        self.runs: list[list[str]] = []

    @classmethod
    def plugin(cls) -> object:
        """An inline plugin object registering this backend as ``fake``."""

        class _Plugin:
            @hookimpl
            def akgentic_sandbox_backends(self) -> Iterable[SandboxBackendSpec]:
                return [SandboxBackendSpec(name="fake", factory=cls, isolation="none (tests only)")]

        return _Plugin()

    def prepare(self, tree: Path, *, limits: ResourceLimits, timeout_s: float) -> None:
        """Remember the tree; nothing to start."""
        if not Path(tree).is_dir():
            raise SandboxError(f"sandbox tree {tree} is not a directory")
        self._tree, self._limits = Path(tree), limits

    def run(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float
    ) -> ExecResult:
        """Run ``argv`` on the host in the tree, within ``timeout_s``."""
        if self._tree is None:
            raise SandboxError("run() called before prepare()")
        relative = sandbox_cwd(cwd)[len(MOUNT_POINT) :].lstrip("/")
        environment = {**base_environment(env), "HOME": str(self._tree), "TMPDIR": str(self._tree)}
        environment["PATH"] = os.environ.get("PATH", environment["PATH"])
        self.runs.append(list(argv))
        out, err = (
            StreamCapture(self._limits.output_bytes),
            StreamCapture(self._limits.output_bytes),
        )
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        started_at, begin = time.time(), time.monotonic()
        try:
            proc = subprocess.Popen(
                list(argv), cwd=self._tree / relative, env=environment, stdin=subprocess.DEVNULL,
                stdout=out_w, stderr=err_w, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            os.close(out_r)
            os.close(err_r)
            return ExecResult(exit_code=127, stderr=f"{exc}\n", started_at=started_at)
        finally:
            os.close(out_w)
            os.close(err_w)
        with self._lock:
            self._proc, self._killed = proc, False
        pipes = {out_r: out, err_r: err}
        finished = pump_pipes(pipes, begin + timeout_s)
        if not finished:
            self._kill_group(proc)
            pump_pipes(pipes, time.monotonic() + 5)
        for fd in pipes:
            os.close(fd)
        code = proc.wait()
        with self._lock:
            self._proc, killed = None, self._killed
        sig = -code if code < 0 else None
        return ExecResult(
            exit_code=TIMEOUT_EXIT_CODE if not finished else (128 + sig if sig else code),
            stdout=out.text(), stderr=err.text(), stdout_truncated=out.truncated,
            stderr_truncated=err.truncated, timed_out=not finished,
            killed=killed or not finished, signal=sig, started_at=started_at,
            duration_s=time.monotonic() - begin,
        )  # fmt: skip

    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL the current run's process group."""
        with self._lock:
            if self._proc is None:
                return
            self._killed = True
            self._kill_group(self._proc)

    def close(self) -> None:
        """Kill any run and forget the tree."""
        self.kill()
        self._tree = None
