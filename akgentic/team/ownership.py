"""Team ownership from the manager's side: team ids, and stopping a team run elsewhere.

A team is run by the manager holding its claim (see :mod:`akgentic.team.store`).
:func:`stop_elsewhere` is what ``TeamManager.stop_team`` does for a team it does
not run: ask a live owner to stop through the signal its record names (and wait
until it let the team go), explain why it cannot, or fence out a dead owner and
record the team stopped. See ``docs/teams.md``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from uuid import UUID

from akgentic.team.errors import TeamOwnedError
from akgentic.team.models import Process, TeamOwner, TeamStatus
from akgentic.team.store import EventStore

__all__ = ["TeamId", "as_team_id", "stop_elsewhere"]

logger = logging.getLogger(__name__)

TeamId = UUID | str


def as_team_id(team_id: TeamId) -> UUID:
    """``team_id`` as a ``UUID`` (``ValueError`` naming it when the text is not one)."""
    if isinstance(team_id, UUID):
        return team_id
    try:
        return UUID(str(team_id))
    except ValueError:
        raise ValueError(f"{team_id!r} is not a team id (a UUID)") from None


def stop_elsewhere(store: EventStore, me: TeamOwner, process: Process, wait: float) -> None:
    """Stop a team run by another manager or process, never rewriting a live owner's record.

    A live owner that records a stop signal and runs on this host is sent that
    signal and waited for (at most ``wait`` seconds); any other live owner gets
    ``TeamOwnedError`` saying where the team runs. A dead owner is fenced out:
    ``me`` claims the team (bumping its epoch) and records it stopped.
    """
    team_id = process.team_id
    if store.claim_held(team_id):
        _ask_owner_to_stop(store, process, wait)
        reloaded = store.load_team(team_id)
        if reloaded is None or reloaded.status != TeamStatus.RUNNING:
            return
    logger.warning(
        "team %s is recorded as running but its owner is gone: marking it stopped", team_id
    )
    claimed = store.claim_team(team_id, me)
    try:
        store.save_team(claimed.with_status(TeamStatus.STOPPED), epoch=claimed.epoch)
    finally:
        store.release_team(team_id)


def _ask_owner_to_stop(store: EventStore, process: Process, wait: float) -> None:
    team_id, owner = process.team_id, process.owner
    where = owner.describe() if owner is not None else "another process"
    if owner is None or owner.stop_signal is None:
        raise TeamOwnedError(
            team_id,
            where,
            f"team {team_id} is running in {where}, which cannot be asked to stop from "
            "outside; stop it through the application that runs it",
        )
    if not owner.on_this_host:
        raise TeamOwnedError(
            team_id,
            where,
            f"team {team_id} is running in {where}; stop it on that host "
            f"(`akgentic team stop {team_id}` there, or Ctrl+C in its terminal)",
        )
    if owner.pid == os.getpid():
        raise TeamOwnedError(
            team_id,
            where,
            f"team {team_id} is running in another manager of this process; stop it there",
        )
    try:
        os.kill(owner.pid, owner.stop_signal)
    except ProcessLookupError:
        pass  # gone between the check and the signal: its lock is about to drop
    except PermissionError:
        raise TeamOwnedError(
            team_id,
            where,
            f"team {team_id} is running in {where}, which this user may not signal; "
            "stop it as the user who started it",
        ) from None
    deadline = time.monotonic() + wait
    pause = threading.Event()
    while store.claim_held(team_id):
        if time.monotonic() > deadline:
            raise TeamOwnedError(
                team_id,
                where,
                f"asked {where} to stop team {team_id}, but it still runs it after {wait:g} s",
            )
        pause.wait(0.05)
