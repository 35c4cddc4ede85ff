"""IdleStopSubscriber: stops a team by itself once it has been idle long enough.

One per team, created by :class:`~akgentic.team.manager.TeamManager` on create
and on resume. The countdown (a :class:`~akgentic.core.utils.timer.Timer`) is
armed at construction, so a team that never receives a message still stops.
Counting an event only moves the countdown's deadline (the process's one timer
clock thread watches every team's), so it costs no thread per event.
``ReceivedMessage`` counts a task as started and ``ProcessedMessage`` as done;
the countdown only runs while no task is in flight. Counting is suppressed while
a stored history is replayed, so a replay cannot move the clock.

With ``passivate=True`` the countdown passivates the team instead
(``team_manager.passivate_team``): its actors stop, its record says
``passivated`` and the next message brings it back (docs/virtual-teams.md).

The delay comes from ``ORCHESTRATOR_TIMEOUT_DELAY`` (seconds, default
:data:`DEFAULT_IDLE_DELAY`); a value that is not a number raises when the
subscriber is built, not later.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Protocol, cast
from uuid import UUID

from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import ProcessedMessage, ReceivedMessage
from akgentic.core.utils.timer import Timer

__all__ = ["DEFAULT_IDLE_DELAY", "IDLE_DELAY_ENV_VAR", "IdleStopSubscriber", "idle_delay"]

logger = logging.getLogger(__name__)

#: Seconds of inactivity after which a team stops, when the environment says nothing.
DEFAULT_IDLE_DELAY = 3600.0
#: Environment variable overriding :data:`DEFAULT_IDLE_DELAY` (kept from the original design).
IDLE_DELAY_ENV_VAR = "ORCHESTRATOR_TIMEOUT_DELAY"


#: Message class -> +1 (a task starts), -1 (one ends) or 0: one dict hit per event
#: instead of isinstance checks, which run pydantic's metaclass check on each miss.
_steps: dict[type, int] = {}


def _step(cls: type) -> int:
    step = 1 if issubclass(cls, ReceivedMessage) else -1 if issubclass(cls, ProcessedMessage) else 0
    _steps[cls] = step
    return step


class _Stopper(Protocol):
    def stop_team(self, team_id: UUID) -> None: ...


class _Passivator(Protocol):
    def passivate_team(self, team_id: UUID, *, when_idle: bool = False) -> None: ...


def idle_delay() -> float:
    """The idle delay from the environment (``ValueError`` for a non-numeric value)."""
    raw = os.environ.get(IDLE_DELAY_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_IDLE_DELAY
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(
            f"{IDLE_DELAY_ENV_VAR}={raw!r} is not a number of seconds (for example 3600)"
        ) from None
    if value <= 0:
        raise ValueError(f"{IDLE_DELAY_ENV_VAR} must be a positive number of seconds, not {raw}")
    return value


class IdleStopSubscriber:
    """Subscriber calling ``team_manager.stop_team(team_id)`` after ``delay`` idle seconds.

    ``passivate=True``: ``team_manager.passivate_team(team_id)`` instead.
    """

    def __init__(
        self,
        team_manager: _Stopper,
        team_id: UUID,
        delay: float | None = None,
        *,
        passivate: bool = False,
    ) -> None:
        if passivate and not callable(getattr(team_manager, "passivate_team", None)):
            raise TypeError(f"{type(team_manager).__name__} has no passivate_team")
        self.team_manager = team_manager
        self.team_id = team_id
        self.passivate = passivate
        self.delay = idle_delay() if delay is None else float(delay)
        self._restoring = False
        self._dispatched = False
        self._latch = threading.Lock()
        self.stopped = threading.Event()
        """Set once the stop this subscriber started has returned (or failed)."""
        self.timer = Timer(self.delay, self._on_timeout)
        self.timer.start()

    # -- EventSubscriber hooks --------------------------------------------
    def on_message(self, msg: Message) -> None:
        """Count tasks in and out (not while a history is replayed)."""
        if self._restoring:
            return
        step = _steps.get(type(msg))
        if step is None:
            step = _step(type(msg))
        if step > 0:
            self.timer.task_started()
        elif step < 0:
            self.timer.task_completed()

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """Suspend counting while the team layer replays history."""
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        """Teardown began: close the countdown for good.

        A plain cancel is not enough here: the team still reports its last
        messages while it drains, and they would arm the countdown again.
        """
        self.timer.close()

    def on_stop(self, team_id: UUID) -> None:
        """The orchestrator stopped (possibly without a stop request): cancel the countdown."""
        self.timer.cancel()

    def close(self) -> None:
        """End the countdown for good (used when a team fails to build)."""
        self.timer.close()

    def rearm(self) -> None:
        """The team was found busy when the countdown ran out: count down again."""
        with self._latch:
            self._dispatched = False
        if self.timer.active_tasks == 0:
            self.timer.start()

    # -- timeout ------------------------------------------------------------
    def _on_timeout(self) -> None:
        with self._latch:
            if self._dispatched:
                return
            self._dispatched = True
        # stop_team asks the orchestrator and waits for it: running it on the timer's
        # own callback is fine, but never on the orchestrator thread, hence a thread.
        thread = threading.Thread(
            target=self._stop, name=f"akgentic-idle-stop-{self.team_id}", daemon=True
        )
        thread.start()

    def _stop(self) -> None:
        verb = "passivating" if self.passivate else "stopping"
        logger.info("team %s idle for %.0f s: %s it", self.team_id, self.delay, verb)
        try:
            if self.passivate:
                cast(_Passivator, self.team_manager).passivate_team(self.team_id, when_idle=True)
            else:
                self.team_manager.stop_team(self.team_id)
        except ValueError as exc:  # already stopped or deleted meanwhile
            logger.debug("idle stop of team %s skipped: %s", self.team_id, exc)
        except Exception:
            logger.exception("idle stop of team %s failed", self.team_id)
        finally:
            self.stopped.set()

    def __repr__(self) -> str:
        return (
            f"IdleStopSubscriber(team_id={self.team_id}, delay={self.delay}, "
            f"passivate={self.passivate})"
        )
