"""Timer: countdown, pause while tasks run, terminal close."""

from __future__ import annotations

import threading

from akgentic.core.utils.timer import Timer


def test_the_callback_fires_after_the_delay() -> None:
    fired = threading.Event()
    timer = Timer(0.02, fired.set)
    timer.start()
    assert fired.wait(2)


def test_cancel_pauses_and_start_rearms() -> None:
    fired = threading.Event()
    timer = Timer(0.05, fired.set)
    timer.start()
    timer.cancel()
    assert not timer.is_running
    timer.start()
    assert fired.wait(2)


def test_close_is_terminal_and_idempotent() -> None:
    fired = threading.Event()
    timer = Timer(0.01, fired.set)
    timer.close()
    timer.close()
    timer.start()
    assert not timer.is_running and timer.closed
    assert not fired.wait(0.05)


def test_running_tasks_hold_the_countdown_until_the_last_completes() -> None:
    fired = threading.Event()
    timer = Timer(0.02, fired.set)
    timer.start()
    timer.task_started()
    timer.task_started()
    timer.task_completed()
    assert timer.active_tasks == 1 and not timer.is_running
    timer.task_completed()
    assert fired.wait(2)


def test_completions_never_go_below_zero() -> None:
    timer = Timer(10, lambda: None)
    timer.task_completed()
    assert timer.active_tasks == 0
    timer.close()
