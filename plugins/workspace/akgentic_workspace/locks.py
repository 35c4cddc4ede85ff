"""Locks on the tree's ``<meta>`` sibling: per-path write locks and the exec lease.

They are ``flock`` locks on files, so they order agents, teams and processes over one
tree alike (a shared volume included), and the kernel frees them when a process dies.
The lock files are never unlinked: unlinking a lock file lets two holders lock two
different inodes under one name.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RetriableError

__all__ = ["PATH_LOCK_TIMEOUT_S", "MetaDir", "lock_file_name"]

log = logging.getLogger("akgentic_workspace.locks")

PATH_LOCK_TIMEOUT_S = 10.0
# Per thread: how deep each journal lock (by path) is held, for re-entry.
_JOURNAL_HELD = threading.local()
_POLL_S = 0.002


def lock_file_name(key: str) -> str:
    """``path-<sha256 of the canonical key>``."""
    return "path-" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def _busy_running(marker: dict[str, Any]) -> str:
    return (
        f"workspace busy — exec run {marker.get('run_id', '?')} is in progress (agent "
        f"'{marker.get('agent_name', '?')}'); nothing was changed. Retry the change once "
        "the run has finished."
    )


class MetaDir:
    """The ``<leaf>.index`` sibling: ``locks/``, ``exec.lock``, ``cache/``.

    When it cannot be created, writes proceed unlocked after one WARNING.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.usable = True
        # Plain strings: these are joined on every call of every mutation.
        self._locks_prefix = os.path.join(path, "locks", "")
        self._lease = os.path.join(path, "exec.lock")
        try:
            (path / "locks").mkdir(parents=True, exist_ok=True)
            (path / "cache").mkdir(parents=True, exist_ok=True)
        except OSError as error:
            self.usable = False
            log.warning(
                "workspace index %s cannot be created (%s): writes are unlocked", path, error
            )

    @property
    def lease_path(self) -> Path:
        """The exec lease's lock file."""
        return self.path / "exec.lock"

    @contextlib.contextmanager
    def path_locks(
        self, keys: Iterable[str], display: dict[str, str] | None = None
    ) -> Iterator[None]:
        """Exclusive locks on every key, taken in lock-file order, each within 10 s."""
        if not self.usable:
            yield
            return
        names = sorted({lock_file_name(key): key for key in keys}.items())
        held: list[int] = []
        try:
            for name, key in names:
                fd = os.open(
                    self._locks_prefix + name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666
                )
                held.append(fd)
                if not _flock_within(fd, fcntl.LOCK_EX, PATH_LOCK_TIMEOUT_S):
                    shown = (display or {}).get(key, key)
                    raise RetriableError(f"another writer is holding {shown}; retry")
            yield
        finally:
            for fd in reversed(held):
                os.close(fd)  # closing releases the lock

    @contextlib.contextmanager
    def journal_lock(self) -> Iterator[None]:
        """The journal's lock: one mutation and its commit at a time over the tree.

        Re-entrant within a thread: a mutation holds it across its out-of-band scan, the
        write and its own commit (so another process's scan cannot take the write as
        out-of-band), and the journal's calls inside take it again. A second ``flock``
        on a new descriptor from the same thread would wait on itself.
        """
        if not self.usable:
            yield
            return
        path = str(self.path / "locks" / "journal")
        held: dict[str, int] = _JOURNAL_HELD.__dict__.setdefault("depth", {})
        if held.get(path):
            held[path] += 1
            try:
                yield
            finally:
                held[path] -= 1
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held[path] = 1
            try:
                yield
            finally:
                held.pop(path, None)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def not_busy(self) -> Iterator[None]:
        """Hold a shared lock on the exec lease, or raise naming the run holding it."""
        if not self.usable:
            yield
            return
        try:
            fd = os.open(self._lease, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as error:
            raise RetriableError(_environment_failure(error)) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RetriableError(_busy_running(read_marker(fd))) from None
            except OSError as error:
                raise RetriableError(_environment_failure(error)) from None
            yield
        finally:
            os.close(fd)


def _environment_failure(error: OSError) -> str:
    return (
        "workspace busy — the workspace could not be locked "
        f"({error.strerror}); this is an environment failure, not contention: report it "
        "rather than retrying"
    )


def environment_failure(error: OSError) -> str:
    """The message of a lease that could not be taken for a reason other than contention."""
    return _environment_failure(error)


def read_marker(fd: int) -> dict[str, Any]:
    """The JSON marker a lease holder wrote into the lease file ({} when unreadable)."""
    try:
        raw = os.pread(fd, 4096, 0)
        value = json.loads(raw.decode("utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _flock_within(fd: int, operation: int, timeout_s: float) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
        return True  # the common case: uncontended, no clock or event needed
    except BlockingIOError:
        pass
    deadline = time.monotonic() + timeout_s
    pause = threading.Event()
    while True:
        if time.monotonic() >= deadline:
            return False
        pause.wait(_POLL_S)
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass


def flock_within(fd: int, operation: int, timeout_s: float) -> bool:
    """``flock`` retried without blocking until ``timeout_s``; False when never granted."""
    return _flock_within(fd, operation, timeout_s)
