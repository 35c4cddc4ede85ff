"""Timer: countdown, pause while tasks run, terminal close."""

from __future__ import annotations

import threading
import time

import pytest

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


def test_rearming_many_timers_many_times_starts_no_thread_per_rearm(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[threading.Thread] = []
    original = threading.Thread.start

    def counting_start(thread: threading.Thread) -> None:
        started.append(thread)
        original(thread)

    timers = [Timer(60, lambda: None) for _ in range(50)]
    monkeypatch.setattr(threading.Thread, "start", counting_start)
    try:
        for _ in range(200):
            for timer in timers:
                timer.task_started()
                timer.task_completed()
                timer.start()
    finally:
        monkeypatch.undo()
        for timer in timers:
            timer.close()
    # At most the shared clock thread, if no earlier test started it.
    assert [t.name for t in started] in ([], ["akgentic-timer-clock"])


def test_a_rearmed_timer_fires_once_after_its_last_rearm() -> None:
    fired: list[float] = []
    done = threading.Event()

    def fire() -> None:
        fired.append(time.monotonic())
        done.set()

    timer = Timer(0.2, fire)
    timer.start()
    last = time.monotonic()
    for _ in range(5):
        # Each re-arm pushes the deadline back; the clock files the timer again.
        done.wait(0.1)
        timer.start()
        last = time.monotonic()
    assert done.wait(5)
    assert fired[0] - last >= 0.19
    assert len(fired) == 1


def test_a_shorter_delay_set_while_armed_takes_effect() -> None:
    fired = threading.Event()
    timer = Timer(60, fired.set)
    timer.start()
    timer.delay = 0.02
    timer.start()
    assert fired.wait(5)


def test_many_timers_fire_independently_through_one_clock() -> None:
    events = [threading.Event() for _ in range(20)]
    timers = [Timer(0.01 * (i % 5 + 1), e.set) for i, e in enumerate(events)]
    for timer in timers:
        timer.start()
    timers[3].close()
    assert all(e.wait(5) for i, e in enumerate(events) if i != 3)
    assert not events[3].is_set()
