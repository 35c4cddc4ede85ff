"""``BwrapBackend``: commands in a bubblewrap sandbox with only the tree writable."""

from __future__ import annotations

import atexit
import contextlib
import os
import resource
import shutil
import signal
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

from akgentic.plugin_api import (
    TIMEOUT_EXIT_CODE,
    ExecResult,
    ResourceLimits,
    SandboxError,
    StreamCapture,
    base_environment,
    pump_pipes,
    sandbox_cwd,
    scrub_tree,
)
from akgentic_bwrap.cgroup import PidsCgroup, find_pids_root, sweep_stale
from akgentic_bwrap.command import build_etc, bwrap_args, find_bwrap
from akgentic_bwrap.spawner import Spawner

__all__ = ["BwrapBackend"]

# How long the output readers may take to finish once the sandbox is gone.
_DRAIN_WAIT_S = 5.0
_etc_lock = threading.Lock()
_etc_dirs: dict[bool, Path] = {}


def _shared_etc(network: bool) -> Path:
    """The sandbox ``/etc`` (with or without resolv.conf), built once per process."""
    with _etc_lock:
        if network not in _etc_dirs:
            directory = Path(tempfile.mkdtemp(prefix="akgentic-bwrap-etc-"))
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
            _etc_dirs[network] = build_etc(directory, network=network)
        return _etc_dirs[network]


def _rlimits(limits: ResourceLimits) -> list[tuple[int, int]]:
    return [
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.max_file_bytes),
        (resource.RLIMIT_NOFILE, limits.max_open_files),
        (resource.RLIMIT_NPROC, limits.max_processes),
        (resource.RLIMIT_CORE, 0),
    ]


class BwrapBackend:
    """Runs each command in a fresh bubblewrap sandbox.

    Every namespace is unshared (network too, unless ``limits.network``; no nested
    user namespace), the command runs as uid/gid 65534 with no capabilities, sees
    read-only system directories, a curated part of ``/etc``, private size-limited
    ``/tmp`` and home, and the tree at ``/workspace`` (``nosuid,nodev``) as the only
    writable host path; bubblewrap gets its options through a memory file, so no host
    path is in a command line the sandbox can read. After every run the tree is
    scrubbed of setuid/setgid bits and device nodes (:func:`akgentic.sandbox.scrub_tree`).
    rlimits are set before exec; the sandbox leads its own session and process group,
    and its pid namespace ends with it, so a timeout or :meth:`kill` leaves no process behind.

    Args:
        bwrap: Path of the ``bwrap`` executable (default: found on PATH at prepare).
        environ: Where ``AKGENTIC_BWRAP_RO_BINDS`` is read (default ``os.environ``).
    """

    name = "bwrap"

    def __init__(self, *, bwrap: str | None = None, environ: Mapping[str, str] | None = None):
        self._bwrap = bwrap
        self._environ = os.environ if environ is None else environ
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._tree: Path | None = None
        self._limits: ResourceLimits | None = None
        self._base: list[str] = []
        self._cgroup: PidsCgroup | None = None
        self._cgroup_cleanup: weakref.finalize[..., BwrapBackend] | None = None
        self._spawner: Spawner | None = None
        self._pid: int | None = None
        self._running = False  # a run is between its start and its result
        self._killed = False
        self._prepare_s = 0.0
        self._prepare_unreported = False

    @property
    def bounds_processes(self) -> bool:
        """Whether the process limit binds here (a pids cgroup, or not running as root).

        The kernel never applies ``RLIMIT_NPROC`` to host root, and as root the sandbox
        user maps to root; without a writable pids cgroup a fork bomb is then bounded
        only by the time budget.
        """
        return self._cgroup is not None or os.geteuid() != 0

    # -- lifecycle --------------------------------------------------------
    def prepare(self, tree: Path, *, limits: ResourceLimits, timeout_s: float) -> None:
        """Bind this backend to ``tree``; instant, idempotent for the same tree."""
        begin = time.monotonic()
        with self._lock:
            tree = Path(os.path.abspath(tree))
            if self._tree is not None:
                if tree == self._tree and limits == self._limits:
                    return
                raise SandboxError(f"this backend is already prepared for {self._tree}")
            if tree.is_symlink() or not tree.is_dir():
                raise SandboxError(f"sandbox tree {tree} is not a directory")
            bwrap = self._bwrap or find_bwrap()
            if bwrap is None:
                raise SandboxError("bwrap is not on PATH (install the bubblewrap package)")
            self._base = bwrap_args(bwrap, tree, _shared_etc(limits.network), limits, self._environ)
            root = find_pids_root()
            if root is not None:
                sweep_stale(root)
                try:
                    # the spawner and bubblewrap's own two processes live there too
                    self._cgroup = PidsCgroup(root, limits.max_processes + 3)
                    # removed even when close() is never called (at collection or exit)
                    self._cgroup_cleanup = weakref.finalize(self, self._cgroup.remove)
                except OSError:
                    self._cgroup = None  # not permitted here: the rlimit is the only bound
            self._spawner = Spawner(self._procs_file)
            self._tree, self._limits = tree, limits
            self._prepare_s = time.monotonic() - begin
            self._prepare_unreported = True

    def close(self) -> None:
        """Kill any run, then stop the spawner and remove the cgroup."""
        self.kill()
        with self._run_lock, self._lock:
            if self._spawner is not None:
                self._spawner.close()
                self._spawner = None
            if self._cgroup_cleanup is not None:
                self._cgroup_cleanup()
            self._tree = self._cgroup = self._cgroup_cleanup = None
            self._limits = None

    def kill(self) -> None:
        """SIGKILL the current run's process group; its pid namespace dies with it."""
        with self._lock:
            if not self._running:
                return
            self._killed = True
            if self._pid is not None:  # else the run kills itself as soon as it spawned
                self._signal_group(self._pid)

    @staticmethod
    def _signal_group(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)

    @property
    def _procs_file(self) -> str | None:
        return self._cgroup.procs_file if self._cgroup is not None else None

    # -- running ----------------------------------------------------------
    def run(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float
    ) -> ExecResult:
        """Run ``argv`` literally in ``cwd`` (relative to the tree) within ``timeout_s``."""
        if self._tree is None or self._limits is None:
            raise SandboxError("run() called before prepare()")
        if not argv:
            raise SandboxError("empty command")
        limits, tree = self._limits, self._tree
        options = [*self._base[1:], "--chdir", sandbox_cwd(cwd)]
        command = [self._base[0], "--", *argv]
        environment = base_environment(env)
        with self._run_lock:
            prepare_s = self._prepare_s if self._prepare_unreported else 0.0
            self._prepare_unreported = False
            try:
                return self._run_locked(command, options, environment, limits, timeout_s, prepare_s)
            finally:
                # the run's pid namespace is gone with it: nothing inside can race this
                scrub_tree(tree)

    def _run_locked(
        self,
        args: list[str],
        options: list[str],
        environment: dict[str, str],
        limits: ResourceLimits,
        timeout_s: float,
        prepare_s: float,
    ) -> ExecResult:
        out = StreamCapture(limits.output_bytes)
        err = StreamCapture(limits.output_bytes)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if self._spawner is None or not self._spawner.alive:
            if self._spawner is not None:
                self._spawner.close()
            self._spawner = Spawner(self._procs_file)  # it died: a new one, same cgroup
        spawner = self._spawner
        with self._lock:
            self._running, self._killed = True, False
        started_at = time.time()
        begin = time.monotonic()
        try:
            pid = spawner.spawn(args, environment, _rlimits(limits), out_w, err_w, options)
        except SandboxError:
            os.close(out_r)
            os.close(err_r)
            with self._lock:
                self._running = False
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        pipes = {out_r: out, err_r: err}
        with self._lock:
            self._pid = pid
            if self._killed:  # kill() came while the command was being started
                self._signal_group(pid)
        deadline = begin + max(timeout_s, 0.0)
        timed_out = False
        try:
            # Output ends when every process holding the pipes is gone; a command that
            # closed them early is still bounded by the wait below.
            finished = pump_pipes(pipes, deadline)
            returncode = None
            if finished:
                returncode = spawner.wait(max(deadline - time.monotonic(), 0.0))
            if returncode is None:
                timed_out = True
                with self._lock:
                    self._signal_group(pid)
                pump_pipes(pipes, time.monotonic() + _DRAIN_WAIT_S)
                returncode = spawner.wait(_DRAIN_WAIT_S)
                if returncode is None:
                    raise SandboxError("bubblewrap did not end after SIGKILL")
        finally:
            with self._lock:
                self._pid = None
                self._running = False
                killed = self._killed
            for fd in pipes:  # only left when draining after a kill timed out
                os.close(fd)
        duration = time.monotonic() - begin
        return _result(returncode, out, err, timed_out, killed, started_at, duration, prepare_s)


def _result(
    returncode: int,
    out: StreamCapture,
    err: StreamCapture,
    timed_out: bool,
    killed: bool,
    started_at: float,
    duration: float,
    prepare_s: float,
) -> ExecResult:
    sig: int | None = None
    if returncode < 0:  # bubblewrap itself was signalled (our kill)
        sig = -returncode
        code = 128 + sig
    else:
        code = returncode
        if 128 < code < 128 + 65:  # bubblewrap reports a signalled command as 128+N
            sig = code - 128
    if timed_out:
        code = TIMEOUT_EXIT_CODE
    return ExecResult(
        exit_code=code,
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        timed_out=timed_out,
        killed=killed or timed_out,
        signal=sig,
        started_at=started_at,
        duration_s=duration,
        prepare_s=prepare_s,
    )
