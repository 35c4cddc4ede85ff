"""Bounded waits on a condition, for tests of actors, threads and processes.

A test that waits for another thread must wait on a condition with a deadline, never
sleep for a guessed time: :func:`wait_until` fails the test when the deadline passes,
:func:`poll_until` says whether the condition came true in time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["poll_until", "wait_until"]

DEFAULT_TIMEOUT = 10.0
_INTERVAL = 0.005


def poll_until(
    predicate: Callable[[], object], timeout: float = DEFAULT_TIMEOUT, interval: float = _INTERVAL
) -> bool:
    """True as soon as ``predicate()`` is true; False once ``timeout`` seconds have passed.

    The predicate is checked at least once, and once more at the deadline, so a
    condition that comes true while the last pause runs is not missed.
    """
    deadline = time.monotonic() + timeout
    # An event nobody sets: a pause that, unlike time.sleep, is an explicit bounded wait.
    pause = threading.Event()
    while not predicate():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        pause.wait(min(interval, remaining))
    return True


def wait_until(
    predicate: Callable[[], object], timeout: float = DEFAULT_TIMEOUT, interval: float = _INTERVAL
) -> None:
    """Return once ``predicate()`` is true; raise AssertionError after ``timeout`` seconds."""
    if not poll_until(predicate, timeout, interval):
        raise AssertionError(f"condition not met within {timeout} s")
