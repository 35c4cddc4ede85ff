"""ActivityMonitor: knows whether a team has any message in flight.

The orchestrator's ledger opens an entry for every ``SentMessage`` and closes it
with the recipient's ``ProcessedMessage`` (or ``HandledMessage`` when the
message was absorbed into a run). A team is *idle* when every entry is closed.
Entries are keyed by ``(message id, recipient id)`` because one message
instance may be sent to several recipients.

Two kinds of sends never get a closing entry and are not counted: sends from
the ``@ActorSystem`` context (the welcome message, tells from plain code) and
sends addressed to it (answers to code outside the team, which is no actor).
"""

from __future__ import annotations

import threading
import time
from typing import cast

from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import HandledMessage, ProcessedMessage, SentMessage

__all__ = ["ActivityMonitor"]

_OUTSIDE_ROLE = "ActorSystem"
_OTHER, _OPENS, _CLOSES = range(3)
#: Message class -> what it does to the ledger. ``isinstance`` against a tuple of
#: pydantic classes runs their metaclass's Python-level check for each miss, per event.
_ledger_kinds: dict[type, int] = {}


def _ledger_kind(cls: type) -> int:
    kind = _ledger_kinds.get(cls)
    if kind is None:
        if issubclass(cls, SentMessage):
            kind = _OPENS
        elif issubclass(cls, ProcessedMessage | HandledMessage):
            kind = _CLOSES
        else:
            kind = _OTHER
        _ledger_kinds[cls] = kind
    return kind


class ActivityMonitor(EventSubscriber):
    """Event subscriber tracking open ledger entries; :meth:`wait_idle` waits for none."""

    def __init__(self) -> None:
        # The ledger is updated under the bare lock (the Condition's own
        # __enter__ is a Python call, paid per event); waiters use the Condition.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # Threads in wait_idle: the ledger empties after almost every turn, and a
        # notify_all nobody waits for still runs Python code on the orchestrator.
        self._waiters = 0
        # Keyed by the ids' integers: a tuple of ints hashes in C, while a
        # UUID's __hash__ is a Python call (four of them per entry opened or closed).
        self._open: dict[tuple[int, int], int] = {}
        self._changes = 0

    @property
    def in_flight(self) -> int:
        """Number of messages sent and not yet processed."""
        with self._cond:
            return sum(self._open.values())

    @property
    def idle(self) -> bool:
        """Whether no message is in flight (read without the lock: a hint)."""
        return not self._open

    @property
    def changes(self) -> int:
        """How many ledger entries were opened or closed so far (a progress counter)."""
        return self._changes

    def on_message(self, msg: Message) -> None:
        """Open or close ledger entries."""
        kind = _ledger_kinds.get(type(msg))
        if kind is None:
            kind = _ledger_kind(type(msg))
        if kind == _OPENS:
            sent = cast(SentMessage, msg)
            sender = sent.sender
            recipient = sent.recipient
            if sender is None or recipient is None:
                return
            if sender.role == _OUTSIDE_ROLE or recipient.role == _OUTSIDE_ROLE:
                return
            key = (sent.message.id.int, recipient.agent_id.int)
            with self._lock:
                self._open[key] = self._open.get(key, 0) + 1
                self._changes += 1
        elif kind == _CLOSES:
            closing = cast("ProcessedMessage | HandledMessage", msg)
            sender = closing.sender
            if sender is None:
                return
            key = (closing.message_id.int, sender.agent_id.int)
            with self._lock:
                count = self._open.get(key)
                if count is None:
                    return  # a message nobody reported sending (told from plain code)
                if count <= 1:
                    del self._open[key]
                else:
                    self._open[key] = count - 1
                self._changes += 1
                if not self._open and self._waiters:
                    self._cond.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no message is in flight; ``False`` if ``timeout`` seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._open:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._waiters += 1
                try:
                    self._cond.wait(remaining)
                finally:
                    self._waiters -= 1
            return True

    def __repr__(self) -> str:
        return f"ActivityMonitor(in_flight={self.in_flight})"
