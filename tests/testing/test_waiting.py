"""The bounded waits every test uses instead of sleeping."""

from __future__ import annotations

import threading
import time

import pytest

from akgentic.testing import poll_until, wait_until


def test_a_condition_set_by_another_thread_ends_the_wait_well_before_the_deadline() -> None:
    flag = threading.Event()
    threading.Timer(0.05, flag.set).start()
    started = time.monotonic()
    wait_until(flag.is_set, timeout=30)
    assert flag.is_set()
    assert time.monotonic() - started < 25


def test_a_condition_that_never_comes_true_fails_the_wait_at_its_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"not met within 0\.1 s"):
        wait_until(lambda: False, timeout=0.1)
    assert time.monotonic() - started >= 0.1


def test_poll_until_says_whether_the_condition_came_true_and_checks_at_least_once() -> None:
    calls: list[int] = []

    def true_once_asked() -> bool:
        calls.append(1)
        return True

    assert poll_until(true_once_asked, timeout=0) is True
    assert calls == [1]
    assert poll_until(lambda: False, timeout=0.02) is False
