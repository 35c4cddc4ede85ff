"""What the notification plugin's tests share: a clock the tests move by hand.

Reminders are due by wall-clock time; real waits of minutes would make the tests
slow and flaky, so ``models.now`` reads this clock instead and the delivery loop
ticks every 50 ms. A test module cannot import this file (``--import-mode=importlib``):
the clock reaches the tests as the ``clock`` fixture.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from akgentic_notification import models


class Clock:
    """Stands for ``models.now`` during a test; moves only when told."""

    def __init__(self) -> None:
        self.current = models.now()

    def __call__(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock()
    monkeypatch.setattr(models, "now", moved)
    monkeypatch.setattr(models, "TICK_INTERVAL_S", 0.05)
    return moved
