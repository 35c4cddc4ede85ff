"""Exec: one command at a time over a tree, in a sandbox, under an exclusive lease.

The :class:`ExecService` owns the sandbox backend (made from the record the card
resolved through the plugin registry, never imported), one long-lived worker thread,
the run table and the lease. ``request`` is O(1): validate the working directory,
take the lease, commit out-of-band dirt, record, submit; the caller then waits on the
run's events on its own thread. The worker validates the command, prepares the backend
on first use (cold-start budget), runs it (run budget, timed from its actual start),
commits what it changed, releases the lease and reports.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from akgentic.plugin_api import (
    CommandNotAllowedError,
    CommandParseError,
    ExecResult,
    ResourceLimits,
    RetriableError,
    SandboxError,
    SandboxNotReady,
    base_environment,
    validate_command,
)
from akgentic_workspace.journal import HUMAN, Author, Journal
from akgentic_workspace.locks import environment_failure, flock_within, read_marker
from akgentic_workspace.paths import WorkspaceLocation

__all__ = [
    "COLD_START_S",
    "REPORT_MARGIN_S",
    "ExecConfig",
    "ExecService",
    "RunHandle",
    "render_result",
]

log = logging.getLogger("akgentic_workspace.exec")

COLD_START_S = 20.0
REPORT_MARGIN_S = 1.0
LEASE_RETRY_S = 2.0
OVERRUN_GRACE_S = 5.0
STREAM_CAP = 20_000
_RUNS_PER_AGENT = 32
_SETTLED = 128

BUSY_OTHER = (
    "workspace busy — another command is running in it, so yours was not started and "
    "nothing is lost. Retry once it has finished."
)


@dataclass(frozen=True)
class ExecConfig:
    """What a card tells the exec service (last writer wins)."""

    backend_name: str
    factory: Callable[[], object]
    budget_s: float
    limits: ResourceLimits
    env: Mapping[str, str]
    journal: Journal | None


@dataclass
class RunHandle:
    """One run: its id, owner, command, events and outcome."""

    run_id: str
    agent_id: str
    command: str
    budget_s: float
    started: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    started_mono: float = 0.0
    rendering: str = ""
    #: Journal failures around the run, appended to its rendering.
    journal_notes: list[str] = field(default_factory=list)


def _clip(text: str) -> str:
    if len(text) <= STREAM_CAP:
        return text
    elided = len(text) - 20_000
    return f"{text[:4000]}\n[... {elided} characters elided ...]\n{text[-16000:]}"


def render_result(run_id: str, result: ExecResult, budget_s: float, output_bytes: int) -> str:
    """``Run <id> - exit_code: <n> (OK|FAILED|TIMED OUT)`` then the non-blank streams."""
    state = "TIMED OUT" if result.timed_out else ("OK" if result.exit_code == 0 else "FAILED")
    parts = [f"Run {run_id} - exit_code: {result.exit_code} ({state})"]
    stdout, stderr = result.stdout, result.stderr
    if result.timed_out:
        stderr = (stderr.rstrip("\n") + "\n" if stderr.strip() else "") + (
            f"Command exceeded its {budget_s:g}s budget and was killed."
        )
    for name, text, truncated in (
        ("stdout", stdout, result.stdout_truncated),
        ("stderr", stderr, result.stderr_truncated),
    ):
        if not text.strip():
            continue
        body = _clip(text)
        if truncated:
            body += f"\n[output truncated by the sandbox at {output_bytes} bytes]"
        parts.append(f"**{name}**\n{body}")
    return "\n\n".join(parts)


class ExecService:
    """The exec side of one tree within one team (see the module docstring)."""

    def __init__(self, location: WorkspaceLocation) -> None:
        self.location = location
        self._config: ExecConfig | None = None
        self._backend: object | None = None
        self._prepared = False
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="workspace-exec")
        self._runs: OrderedDict[str, RunHandle] = OrderedDict()
        self._by_agent: dict[str, deque[str]] = {}
        self._names: dict[str, str] = {}
        self._lease_fd: int | None = None
        self._closed = False

    # ------------------------------------------------------------ configuration

    def configure(self, config: ExecConfig) -> None:
        """Per-card settings (last writer wins)."""
        self._config = config

    def attach(self, agent_id: str, name: str) -> None:
        """Remember an agent's display name for commits and messages."""
        with self._lock:
            self._names[agent_id] = name
            while len(self._names) > 512:
                self._names.pop(next(iter(self._names)))

    # ------------------------------------------------------------ the lease

    def _take_lease(self, run_id: str, agent_id: str, budget_s: float) -> int | str:
        path = self.location.meta_dir / "exec.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as error:
            return environment_failure(error)
        try:
            granted = flock_within(fd, fcntl.LOCK_EX, LEASE_RETRY_S)
        except OSError as error:
            os.close(fd)
            return environment_failure(error)
        if not granted:
            marker = read_marker(fd)
            os.close(fd)
            started = float(marker.get("started_at", 0) or 0)
            budget = float(marker.get("budget_s", 0) or 0)
            if started and time.time() > started + budget + OVERRUN_GRACE_S:
                return (
                    f"workspace busy — the command running in it has overrun its {budget:g}s "
                    "budget and is being stopped; nothing of yours was started. Retry shortly."
                )
            return BUSY_OTHER
        marker_data = {
            "run_id": run_id,
            "agent_id": agent_id,
            "agent_name": self._names.get(agent_id, agent_id),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": time.time(),
            "budget_s": budget_s,
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(marker_data).encode(), 0)
        return fd

    @staticmethod
    def _release(fd: int | None) -> None:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            with contextlib.suppress(OSError):
                os.close(fd)

    # ------------------------------------------------------------ requests

    def request(self, agent_id: str, command: str, cwd: str, as_human: bool) -> RunHandle | str:
        """Start a run (a handle) or say why not (a message). O(1) apart from the lease."""
        config = self._config
        if config is None or self._closed:
            return "workspace exec is not available (the workspace is shutting down)"
        run_id = uuid.uuid4().hex[:8]
        lease = self._take_lease(run_id, agent_id, config.budget_s)
        if isinstance(lease, str):
            return lease
        note = config.journal.commit_out_of_band() if config.journal is not None else None
        handle = RunHandle(run_id, agent_id, command, config.budget_s)
        if note:
            handle.journal_notes.append(note)
        with self._lock:
            self._runs[run_id] = handle
            while len(self._runs) > _SETTLED:
                self._runs.popitem(last=False)
            ids = self._by_agent.setdefault(agent_id, deque(maxlen=_RUNS_PER_AGENT))
            ids.append(run_id)
        author = HUMAN if as_human else Author.agent(self._names.get(agent_id, agent_id), agent_id)
        try:
            self._executor.submit(self._work, handle, cwd, config, lease, author)
        except RuntimeError:
            self._release(lease)
            return "workspace exec is not available (the workspace is shutting down)"
        return handle

    def handle(self, agent_id: str, run_id: str) -> RunHandle | str:
        """The caller's own run, or the unknown-id message listing the caller's runs."""
        with self._lock:
            found = self._runs.get(run_id.strip())
            mine = list(self._by_agent.get(agent_id, ()))
        if found is not None and found.agent_id == agent_id:
            return found
        listed = ", ".join(mine) or "none"
        return (
            f"Unknown run id '{run_id}'. Your recent runs: {listed}. Pass one of those to "
            "workspace_exec_result."
        )

    # ------------------------------------------------------------ the worker

    def _backend_for(self, config: ExecConfig) -> object:
        if self._backend is None:
            self._backend = config.factory()
        return self._backend

    def _work(
        self, handle: RunHandle, cwd: str, config: ExecConfig, lease: int, author: Author
    ) -> None:
        result: ExecResult | None = None
        rendering = ""
        try:
            argv = validate_command(handle.command)
            backend = self._backend_for(config)
            if not self._prepared:
                began = time.monotonic()
                try:
                    backend.prepare(  # type: ignore[attr-defined]
                        self.location.tree, limits=config.limits, timeout_s=COLD_START_S
                    )
                except SandboxNotReady as error:
                    rendering = (
                        f"Run {handle.run_id} failed: the sandbox backend '{config.backend_name}' "
                        f"was not ready within {COLD_START_S:g} s ({error.reason}); nothing ran"
                    )
                    return
                self._prepared = True
                log.debug(
                    "sandbox %s prepared in %.3f s", config.backend_name, time.monotonic() - began
                )
            env = base_environment(config.env, run_id=handle.run_id)
            handle.started_mono = time.monotonic()
            handle.started.set()
            result = backend.run(  # type: ignore[attr-defined]
                argv, cwd=cwd, env=env, timeout_s=handle.budget_s
            )
            assert isinstance(result, ExecResult)
            rendering = render_result(
                handle.run_id, result, handle.budget_s, config.limits.output_bytes
            )
        except (CommandNotAllowedError, CommandParseError) as error:
            rendering = f"Run {handle.run_id} failed: {error}"
        except SandboxError as error:
            rendering = (
                f"Run {handle.run_id} failed: the sandbox could not run the command ({error})"
            )
        except Exception as error:  # a backend bug must still settle the run and free the tree
            log.exception("exec run %s crashed", handle.run_id)
            rendering = f"Run {handle.run_id} failed: {type(error).__name__}: {error}"
        finally:
            if result is not None and config.journal is not None and not self._closed:
                note = config.journal.commit_run(handle.command, author)
                if note:
                    handle.journal_notes.append(note)
            self._release(lease)
            rendering = rendering or f"Run {handle.run_id} failed: no outcome"
            handle.rendering = "\n".join([rendering, *handle.journal_notes])
            handle.started.set()
            handle.done.set()

    # ------------------------------------------------------------ teardown

    def close(self) -> None:
        """Refuse requests, kill the run, wait up to 3 s, close the backend."""
        self._closed = True
        backend = self._backend
        if backend is not None:
            with contextlib.suppress(Exception):
                backend.kill()  # type: ignore[attr-defined]
        self._executor.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 3.0
        with self._lock:
            pending = [h for h in self._runs.values() if not h.done.is_set()]
        for run in pending:
            # A kill that lands while the backend is still starting the command finds
            # nothing to kill: repeat it until the run settles or the 3 s are spent.
            while not run.done.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    break
                if backend is not None:
                    with contextlib.suppress(Exception):
                        backend.kill()  # type: ignore[attr-defined]
        if backend is not None:
            with contextlib.suppress(Exception):
                backend.close()  # type: ignore[attr-defined]


def wait_for_run(handle: RunHandle, poll_attempts: int, poll_delay_s: float) -> str:
    """Wait on the caller's thread as ``poll_attempts`` says; the rendering or a hand-off."""
    still = (
        f"Run {handle.run_id} is still in progress. It holds the workspace until it finishes. "
        f"Call workspace_exec_result('{handle.run_id}') on your next turn to collect its output."
    )
    if poll_attempts == 0:
        return handle.rendering if handle.done.is_set() else still
    if poll_attempts > 0:
        handle.done.wait(min(poll_attempts * poll_delay_s, handle.budget_s))
        return handle.rendering if handle.done.is_set() else still
    if not handle.started.wait(COLD_START_S + REPORT_MARGIN_S):
        return _overdue(handle)
    remaining = handle.started_mono + handle.budget_s + REPORT_MARGIN_S - time.monotonic()
    if handle.done.wait(max(remaining, 0.0)):
        return handle.rendering
    return _overdue(handle)


def _overdue(handle: RunHandle) -> str:
    return (
        f"Run {handle.run_id} passed its {handle.budget_s:g}s budget without reporting. It still "
        f"holds the workspace. Nothing is lost — workspace_exec_result('{handle.run_id}') "
        "collects the output once it reports."
    )


def status_of(found: RunHandle | str) -> str:
    """What ``workspace_exec_result`` answers for a handle lookup."""
    if isinstance(found, str):
        return found
    if found.done.is_set():
        return found.rendering
    return (
        f"Run {found.run_id} is still in progress. It holds the workspace until it finishes. "
        f"Call workspace_exec_result('{found.run_id}') on your next turn to collect its output."
    )


def check_cwd(tree: Path, key: str) -> None:
    """``cwd`` must be an existing directory of the tree (RetriableError otherwise)."""
    path = tree / key if key else tree
    if not path.is_dir() or path.is_symlink():
        raise RetriableError(f"Directory not found: {key or '.'}")
