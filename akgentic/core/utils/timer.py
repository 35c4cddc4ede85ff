"""A re-armable countdown that can be paused while work is in flight."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Timer"]


class Timer:
    """Call ``timeout_callback`` once ``delay`` seconds pass with no work in flight.

    ``start`` (re-)arms the countdown, ``cancel`` pauses it (it can be started
    again), ``close`` ends it for good. ``task_started``/``task_completed`` keep a
    count of running tasks: the countdown is paused while any runs and re-armed
    when the last one completes. The callback runs on a daemon thread.
    """

    def __init__(self, delay: float, timeout_callback: Callable[[], object]) -> None:
        self.delay = delay
        self.timeout_callback = timeout_callback
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False
        self._tasks = 0

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def active_tasks(self) -> int:
        """Number of tasks currently counted as running."""
        return self._tasks

    @property
    def is_running(self) -> bool:
        """True while a countdown is armed."""
        timer = self._timer
        return timer is not None and timer.is_alive()

    def _fire(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._timer = None
        self.timeout_callback()

    def _cancel_locked(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def start(self) -> None:
        """Arm (or re-arm) the countdown; does nothing after :meth:`close`."""
        with self._lock:
            if self._closed:
                return
            self._cancel_locked()
            timer = threading.Timer(self.delay, self._fire)
            timer.daemon = True
            self._timer = timer
            timer.start()

    def cancel(self) -> None:
        """Stop the countdown; :meth:`start` may arm it again."""
        with self._lock:
            self._cancel_locked()

    def close(self) -> None:
        """Stop the countdown for good (idempotent)."""
        with self._lock:
            self._closed = True
            self._cancel_locked()

    def task_started(self) -> None:
        """Count a running task and pause the countdown."""
        with self._lock:
            self._tasks += 1
            self._cancel_locked()

    def task_completed(self) -> None:
        """Count a finished task; re-arm once none is left."""
        with self._lock:
            self._tasks = max(0, self._tasks - 1)
            idle = self._tasks == 0
        if idle:
            self.start()
