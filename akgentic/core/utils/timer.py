"""A re-armable countdown that can be paused while work is in flight.

Every :class:`Timer` of the process shares one clock thread that sleeps until
the earliest deadline. Arming, re-arming, pausing and counting tasks only
change a deadline under a lock: no thread is created or woken for them, which
keeps a timer cheap enough to re-arm on every event a team records. A timer's
queue entry is revised lazily: when a deadline that was pushed back comes due,
the clock files the timer again under its new deadline instead of firing it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

__all__ = ["Timer"]


class _Clock:
    """The one thread that watches the deadlines of every timer."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[tuple[float, int, Timer]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def file(self, timer: Timer, when: float) -> None:
        """Wake ``timer`` at ``when`` (monotonic seconds)."""
        with self._cond:
            queue = self._queue
            heapq.heappush(queue, (when, next(self._order), timer))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="akgentic-timer-clock", daemon=True
                )
                self._thread.start()
            elif queue[0][2] is timer:
                self._cond.notify()  # the clock sleeps until a later deadline

    def withdraw(self, timer: Timer) -> None:
        """Forget every entry of ``timer`` (it will never fire again)."""
        with self._cond:
            kept = [entry for entry in self._queue if entry[2] is not timer]
            if len(kept) != len(self._queue):
                heapq.heapify(kept)
                self._queue = kept

    def _run(self) -> None:
        cond = self._cond
        while True:
            with cond:
                queue = self._queue
                while not queue or queue[0][0] > time.monotonic():
                    cond.wait(None if not queue else queue[0][0] - time.monotonic())
                    queue = self._queue
                when, _, timer = heapq.heappop(queue)
            # Outside the clock's lock: the timer takes its own lock, then may file again.
            timer._due(when)


_CLOCK = _Clock()


class Timer:
    """Call ``timeout_callback`` once ``delay`` seconds pass with no work in flight.

    ``start`` (re-)arms the countdown, ``cancel`` pauses it (it can be started
    again), ``close`` ends it for good. ``task_started``/``task_completed`` keep a
    count of running tasks: the countdown is paused while any runs and re-armed
    when the last one completes. The callback runs on a daemon thread of its own
    (one per firing), so a slow callback never holds up other timers.
    """

    def __init__(self, delay: float, timeout_callback: Callable[[], object]) -> None:
        self.delay = delay
        self.timeout_callback = timeout_callback
        self._lock = threading.Lock()
        self._deadline: float | None = None
        self._filed_at: float | None = None
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
        return self._deadline is not None

    def _arm_locked(self) -> None:
        deadline = time.monotonic() + self.delay
        self._deadline = deadline
        filed = self._filed_at
        if filed is None or deadline < filed:
            self._filed_at = deadline
            _CLOCK.file(self, deadline)

    def _due(self, when: float) -> None:
        """Called by the clock when an entry filed for ``when`` comes due."""
        with self._lock:
            if when != self._filed_at:
                return  # superseded by an earlier entry
            self._filed_at = None
            deadline = self._deadline
            if deadline is None or self._closed:
                return
            if deadline > time.monotonic():
                self._filed_at = deadline  # re-armed since: wait for the new deadline
                _CLOCK.file(self, deadline)
                return
            self._deadline = None
        fire = threading.Thread(target=self._fire, name="akgentic-timer-callback", daemon=True)
        fire.start()

    def _fire(self) -> None:
        if self._closed:
            return
        self.timeout_callback()

    def start(self) -> None:
        """Arm (or re-arm) the countdown; does nothing after :meth:`close`."""
        with self._lock:
            if not self._closed:
                self._arm_locked()

    def cancel(self) -> None:
        """Stop the countdown; :meth:`start` may arm it again."""
        with self._lock:
            self._deadline = None

    def close(self) -> None:
        """Stop the countdown for good (idempotent)."""
        with self._lock:
            self._closed = True
            self._deadline = None
            filed, self._filed_at = self._filed_at, None
        if filed is not None:
            _CLOCK.withdraw(self)

    def task_started(self) -> None:
        """Count a running task and pause the countdown."""
        with self._lock:
            self._tasks += 1
            self._deadline = None

    def task_completed(self) -> None:
        """Count a finished task; re-arm once none is left."""
        with self._lock:
            tasks = self._tasks
            if tasks > 1:
                self._tasks = tasks - 1
                return
            self._tasks = 0
            if not self._closed:
                self._arm_locked()
