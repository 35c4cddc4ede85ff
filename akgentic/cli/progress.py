"""Which agents are waiting on their model, and for how long, while a command runs a team.

A local model can take minutes over one turn; without a sign of life the chat looks
hung. :class:`TurnProgress` follows the LLM events agents publish: a request joining
an agent's history means a model call starts, its response (or anything else the
agent does next: a message, a failure event) means it ended.

On a terminal one status line ("@Manager is thinking… 12 s") is kept up to date
under the conversation; otherwise a plain line is printed every ``every`` seconds a
call has been running (``AKGENTIC_PROGRESS_INTERVAL``, default 30), so logs show
progress and quick calls print nothing.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status

    from akgentic.core.messages.message import Message

__all__ = ["INTERVAL_ENV_VAR", "TurnProgress", "interval_from_env"]

INTERVAL_ENV_VAR = "AKGENTIC_PROGRESS_INTERVAL"
_DEFAULT_INTERVAL = 30.0

#: Events an agent publishes during a model call's own bookkeeping (not its end).
_DURING_CALL = frozenset(
    {"ToolCallEvent", "ToolReturnEvent", "LlmUsageEvent", "LlmSystemPromptEvent"}
)


def interval_from_env() -> float:
    """Seconds between plain progress lines: ``$AKGENTIC_PROGRESS_INTERVAL``, else 30."""
    try:
        value = float(os.environ.get(INTERVAL_ENV_VAR, ""))
    except ValueError:
        return _DEFAULT_INTERVAL
    return value if math.isfinite(value) and value > 0 else _DEFAULT_INTERVAL


class TurnProgress:
    """Tracks model calls in flight from the events a team publishes, and shows them."""

    def __init__(
        self,
        console: Console,
        *,
        live: bool | None = None,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.live = console.is_terminal if live is None else live
        self.every = every if every is not None else interval_from_env()
        self.clock = clock
        self._started: dict[str, float] = {}
        self._reported: dict[str, int] = {}
        self._lock = threading.RLock()  # tick() reads line() under it
        self._status: Status | None = None
        self._ticker: threading.Thread | None = None
        self._wake = threading.Event()

    # -- following the team -------------------------------------------------
    def on_message(self, msg: Message) -> None:
        """Update who is thinking from one orchestrator message."""
        from akgentic.core.messages.orchestrator import EventMessage, SentMessage

        sender = msg.sender.name if msg.sender is not None else None
        if sender is None:
            return
        if isinstance(msg, EventMessage):
            self._on_event(sender, msg.event)
        elif isinstance(msg, SentMessage):
            self._done(sender)

    def _on_event(self, agent: str, event: Any) -> None:
        from pydantic_ai.messages import ModelRequest

        from akgentic.llm.events import LlmMessageEvent

        if isinstance(event, LlmMessageEvent):
            if isinstance(event.message, ModelRequest):
                self._begin(agent)
            else:
                self._done(agent)
        elif type(event).__name__ not in _DURING_CALL:
            self._done(agent)

    def _begin(self, agent: str) -> None:
        with self._lock:
            self._started.setdefault(agent, self.clock())
            self._reported.setdefault(agent, 0)
            if self._ticker is None:
                self._ticker = threading.Thread(
                    target=self._run, name="akgentic-turn-progress", daemon=True
                )
                self._ticker.start()

    def _done(self, agent: str) -> None:
        with self._lock:
            self._started.pop(agent, None)
            self._reported.pop(agent, None)
        self._wake.set()

    # -- showing it ---------------------------------------------------------
    def line(self, now: float | None = None) -> str | None:
        """``@A is thinking… 12 s`` (every agent in flight), or None when none is."""
        now = self.clock() if now is None else now
        with self._lock:
            waits = sorted(self._started.items(), key=lambda item: item[1])
        if not waits:
            return None
        parts = [f"{agent} {now - start:.0f} s" for agent, start in waits]
        verb = "is" if len(parts) == 1 else "are"
        names = ", ".join(parts) if len(parts) > 1 else waits[0][0]
        timing = "" if len(parts) > 1 else f" {now - waits[0][1]:.0f} s"
        return f"{names} {verb} thinking…{timing}"

    def tick(self, now: float | None = None) -> None:
        """Refresh the status line (terminal) or print due progress lines (plain output)."""
        now = self.clock() if now is None else now
        if self.live:
            with self._lock:
                self._refresh(self.line(now))
            return
        due: list[str] = []
        with self._lock:
            for agent, start in sorted(self._started.items(), key=lambda item: item[1]):
                periods = int((now - start) // self.every)
                if periods > self._reported.get(agent, 0):
                    self._reported[agent] = periods
                    due.append(f"{agent} is still thinking… {now - start:.0f} s")
        for text in due:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _refresh(self, text: str | None) -> None:
        if text is None:
            if self._status is not None:
                self._status.stop()
                self._status = None
            return
        if self._status is None:
            self._status = self.console.status(text, refresh_per_second=2)
            self._status.start()
        else:
            self._status.update(text)

    def _run(self) -> None:
        """Tick once a second while a call is in flight; end with the last one."""
        while True:
            self._wake.wait(1.0)
            self._wake.clear()
            self.tick()
            with self._lock:
                if not self._started:
                    self._ticker = None
                    if self.live:
                        self._refresh(None)
                    return
