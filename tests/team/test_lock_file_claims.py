"""A probe of ``claim_held`` never turns a free team into an owned one.

``LockFileClaims.is_held`` checks a team by taking a shared ``flock`` for a moment.
A claim that meets that shared lock is not meeting an owner (owners hold the lock
exclusively), so it must wait the probe out, not report the team owned: otherwise
``akgentic team stop`` (or any status check) racing a resume could leave a free
team with no owner at all, the resume refused in the name of a process that is gone.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from akgentic.team.stores.claims import LockFileClaims


def test_a_claim_waits_out_a_probe_caught_holding_the_shared_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe's shared lock met by a claim does not make a free team look owned.

    ``fcntl.flock`` is wrapped, not mocked: every call reaches the real lock; the wrapper
    only ends the probe right after the claim first met it, to force that interleaving.
    """
    claims = LockFileClaims(tmp_path)
    team_id = uuid4()
    tmp_path.mkdir(exist_ok=True)
    probe = os.open(tmp_path / f"{team_id}.lock", os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(probe, fcntl.LOCK_SH)  # a probe caught mid-check (descheduled, say)
    real_flock = fcntl.flock
    refused = threading.Event()

    def flock(fd: int, operation: int) -> Any:
        try:
            return real_flock(fd, operation)
        except BlockingIOError:
            if operation & fcntl.LOCK_EX and not refused.is_set():
                refused.set()
                os.close(probe)  # the probe ends right after the claim first met it
            raise

    monkeypatch.setattr(fcntl, "flock", flock)  # the module object claims.py uses too
    try:
        assert claims.acquire(team_id)
        assert refused.is_set()  # the interleaving really happened
        assert claims.is_held(team_id)
    finally:
        claims.close()


def test_an_exclusive_owner_is_still_refused_at_once(tmp_path: Path) -> None:
    owner, other = LockFileClaims(tmp_path), LockFileClaims(tmp_path)
    team_id = uuid4()
    try:
        assert owner.acquire(team_id)
        assert not other.acquire(team_id)
        assert other.is_held(team_id)
    finally:
        owner.close()
        other.close()
