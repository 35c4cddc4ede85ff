"""Claims on teams for file-backed stores: a lock held by a live process, nothing more.

A team's owner must be told apart from a dead one at once, without leases or
clocks. :class:`LockFileClaims` keeps, for every team this store object owns,
an open file descriptor with an exclusive ``flock`` on ``<directory>/<team>.lock``.
The kernel drops the lock when the descriptor is closed or the process dies
(SIGKILL included), so "the lock is held" means exactly "a live process owns
the team". ``flock`` locks belong to the open file, not to the process: a
second store object in the same process is refused like another process is.
The descriptors are not inherited by child programs (Python opens files
non-inheritable), so a tool subprocess never keeps a claim alive.

An owner holds the lock exclusively; :meth:`LockFileClaims.is_held` probes by
taking it shared for a moment. A claim that meets a shared lock has met a probe,
not an owner, so it waits the probe out (bounded by :data:`PROBE_WAIT`) instead of
reporting a free team as owned.

The epoch fence itself lives in each store's team record; this module only
answers "may I claim?" and "is somebody holding it?". :func:`claim_error`
builds the error raised when a live owner holds a team, and :class:`LockFileHolds`
gives a :class:`~akgentic.team.stores.base.StoreBase` its hold primitives over a
:class:`LockFileClaims`. See ``docs/teams.md``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from uuid import UUID

from akgentic.team.errors import TeamOwnedError
from akgentic.team.models import Process, TeamOwner

try:  # POSIX only; elsewhere claims are kept within one process.
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX platforms
    fcntl = None  # type: ignore[assignment]

__all__ = ["PROBE_WAIT", "LockFileClaims", "LockFileHolds", "claim_error"]

PROBE_WAIT = 5.0
"""Seconds a claim waits for probes (shared locks) to let go when no owner holds the lock."""


def claim_error(team_id: UUID, record: Process | None) -> TeamOwnedError:
    """The error saying who holds ``team_id`` (from its record, when readable)."""
    owner = record.owner.describe() if record is not None and record.owner else None
    return TeamOwnedError(team_id, owner)


class LockFileClaims:
    """Exclusive ``flock`` per team under ``directory`` (``None``: this object only).

    ``directory=None`` serves in-memory stores: claims are then only visible to
    the store object holding them, which is all an in-memory store can share.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._held: dict[UUID, int] = {}
        self._lock = threading.Lock()

    def _path(self, team_id: UUID) -> Path:
        assert self.directory is not None
        return self.directory / f"{UUID(str(team_id))}.lock"

    def acquire(self, team_id: UUID) -> bool:
        """Take the team's lock; ``False`` when a live holder (here or elsewhere) has it."""
        with self._lock:
            if team_id in self._held:
                return False
            if self.directory is None or fcntl is None:
                self._held[team_id] = -1
                return True
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path(team_id), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                locked = self._lock_exclusively(fd, team_id)
            except BaseException:
                os.close(fd)
                raise
            if not locked:
                os.close(fd)
                return False
            self._held[team_id] = fd
            return True

    def _lock_exclusively(self, fd: int, team_id: UUID) -> bool:
        """``LOCK_EX`` on ``fd``; False when an owner (an exclusive holder) has the lock.

        A refusal caused by shared locks only (probes, and other claimants checking
        for an owner) is retried, so a free team is never reported owned because
        somebody looked at it at the same moment.
        """
        assert fcntl is not None
        deadline = time.monotonic() + PROBE_WAIT
        pause = threading.Event()  # never set: a bounded pause between attempts
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
            if self._owned_exclusively(team_id) or time.monotonic() > deadline:
                return False
            pause.wait(random.uniform(0.0005, 0.003))  # jitter: claimants' checks drift apart

    def _owned_exclusively(self, team_id: UUID) -> bool:
        """Whether someone holds the lock exclusively (an owner), checked with a shared lock."""
        assert fcntl is not None
        try:
            probe = os.open(self._path(team_id), os.O_RDONLY)
        except FileNotFoundError:
            return True  # unlinked by a deletion, which holds the team while it runs
        try:
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(probe)
        return False

    def holds(self, team_id: UUID) -> bool:
        """Whether this object holds the team's lock."""
        with self._lock:
            return team_id in self._held

    def release(self, team_id: UUID) -> None:
        """Drop the team's lock if this object holds it (idempotent)."""
        with self._lock:
            fd = self._held.pop(team_id, None)
        if fd is not None and fd >= 0:
            os.close(fd)

    def forget(self, team_id: UUID) -> None:
        """Remove the lock file of a team this object holds (its record is being deleted).

        Unlinked while still locked, so nobody can take the old file meanwhile; a
        claimant that opened it just before fails as if the team were owned.
        """
        with self._lock:
            held = team_id in self._held and self.directory is not None
        if held:
            self._path(team_id).unlink(missing_ok=True)

    def is_held(self, team_id: UUID) -> bool:
        """Whether a live holder (this object, another one, another process) has the lock."""
        if self.holds(team_id):
            return True
        if self.directory is None or fcntl is None:
            return False
        try:
            fd = os.open(self._path(team_id), os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # also drops the probe's own shared lock
        return False

    def close(self) -> None:
        """Drop every lock this object holds."""
        with self._lock:
            held, self._held = self._held, {}
        for fd in held.values():
            if fd >= 0:
                os.close(fd)


class LockFileHolds:
    """The hold primitives of a ``StoreBase`` over its ``_claims`` (a :class:`LockFileClaims`).

    Mixed in before ``StoreBase`` by the file-backed stores; ``_hold_fault`` says
    what a failure to take the lock (an unwritable directory) means there.
    """

    _claims: LockFileClaims

    def _hold_fault(self, team_id: UUID, exc: OSError) -> Exception:
        """The store error for ``exc``, raised while taking the lock of ``team_id``."""
        raise NotImplementedError

    def _take_hold(self, team_id: UUID, owner: TeamOwner) -> object | None:
        try:
            return True if self._claims.acquire(team_id) else None
        except OSError as exc:
            raise self._hold_fault(team_id, exc) from None

    def _release_hold(self, team_id: UUID) -> None:
        self._claims.release(team_id)

    def _hold_alive(self, team_id: UUID) -> bool:
        return self._claims.is_held(team_id)
