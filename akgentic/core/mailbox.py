"""Actor inbox with C-speed hand-off, plus peeking and absorbing queued mail.

``queue.Queue`` (pykka's default inbox) does its locking and signalling in
Python; every message then costs several Python-level lock operations on both
sides. :class:`Inbox` keeps envelopes in a ``deque`` and signals arrivals
through a ``queue.SimpleQueue`` of wake-up tokens, both implemented in C.
Only the owning actor takes envelopes out, which is what makes the lock-free
peek/absorb below safe: producers only ever append.

An inbox made with ``elastic=True`` lets its actor give its thread up while no
mail comes (:meth:`Inbox.park`): the next envelope put in starts a fresh
thread for the same actor (the ``restart`` callable its actor attached), so
an idle actor holds no thread and the mailbox order is untouched. Producers
of an elastic inbox pay one Python call per envelope for that check.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Collection
from typing import Any
from uuid import UUID

from akgentic.core.messages.message import Message

__all__ = ["Inbox", "peek_messages", "queued_count", "take_messages"]


class Inbox:
    """pykka-compatible inbox (``put``/``get``/``empty``) for threading actors."""

    __slots__ = ("_items", "_lock", "_parked", "_restart", "_tokens", "queue")

    def __init__(self, *, elastic: bool = False) -> None:
        self._items: deque[Any] = deque()
        self._tokens: queue.SimpleQueue[None] = queue.SimpleQueue()
        self.queue = self._items
        self._parked = False
        # Set by the owning actor once it runs (see attach_restart); None: never parks.
        self._restart: Callable[[], None] | None = None
        self._lock: threading.Lock | None = threading.Lock() if elastic else None

    @property
    def elastic(self) -> bool:
        """Whether the owning actor may give its thread up while idle."""
        return self._lock is not None

    @property
    def parked(self) -> bool:
        """True while the owning actor runs no thread (the next envelope starts one)."""
        return self._parked

    def attach_restart(self, restart: Callable[[], None]) -> None:
        """Give an elastic inbox the callable that starts its actor's thread again."""
        if self._lock is None:
            raise RuntimeError("only an elastic inbox parks its actor")
        self._restart = restart

    def detach_restart(self) -> None:
        """Drop the restart callable once the actor stopped.

        It is a bound method of the actor: kept, it would hold a stopped actor alive
        for as long as anyone holds its address (which holds this inbox).
        """
        self._restart = None

    def producer(self) -> tuple[Callable[[Any], None], Callable[[None], None]]:
        """``(append, wake)``: calling both is :meth:`put`, without its Python frame.

        For senders on the hot path; ``wake(None)`` must follow every ``append``.
        """
        if self._lock is None:
            return self._items.append, self._tokens.put
        return self._items.append, self._wake

    def _wake(self, token: None = None, /) -> None:
        self._tokens.put(None)
        if self._parked:
            self._unpark()

    def _unpark(self) -> None:
        lock = self._lock
        assert lock is not None
        with lock:
            if not self._parked:
                return  # another producer (or the actor itself) got there first
            self._parked = False
        restart = self._restart
        assert restart is not None
        restart()

    def park(self) -> bool:
        """Owning actor only: give the thread up if no wake-up is pending (True: parked).

        The flag is raised before the check, under the lock: a producer that
        put its token after the check sees the flag and restarts the actor; one
        that put it before is seen by the check, and the actor goes on.
        """
        lock = self._lock
        if lock is None or self._restart is None:
            return False
        with lock:
            self._parked = True
            if not self._tokens.empty():
                self._parked = False
                return False
            return True

    def consumer(self) -> tuple[Callable[[], None], deque[Any]]:
        """``(wait, items)`` for the owning actor's receive loop.

        ``wait()`` blocks for one wake-up; ``items`` may then be empty (the
        envelope was absorbed meanwhile), else its left end is the next envelope.
        """
        return self._tokens.get, self._items

    def put(self, envelope: Any, /) -> None:
        """Append an envelope and wake the actor (starting its thread if it parked)."""
        self._items.append(envelope)
        self._tokens.put(None)
        if self._parked:
            self._unpark()

    def get(self) -> Any:
        """Next envelope, waiting for one if needed (owning actor only)."""
        items = self._items
        while True:
            self._tokens.get()
            # More tokens than envelopes once absorbed mail was removed: wait again.
            if items:
                return items.popleft()

    def empty(self) -> bool:
        """True when no envelope is queued."""
        return not self._items

    def __len__(self) -> int:
        return len(self._items)


def queued_count(inbox: Any) -> int:
    """Envelopes waiting in ``inbox`` (an akgentic Inbox or a ``queue.Queue``)."""
    if isinstance(inbox, Inbox):
        return len(inbox._items)
    if isinstance(inbox, queue.Queue):
        return inbox.qsize()
    raise TypeError("mailbox access needs an akgentic Inbox or a queue.Queue")


def _envelopes(inbox: Any) -> list[Any]:
    if isinstance(inbox, Inbox):
        return list(inbox.queue.copy())  # deque.copy runs entirely under the GIL
    if isinstance(inbox, queue.Queue):
        with inbox.mutex:
            return list(inbox.queue)
    raise TypeError("mailbox access needs an akgentic Inbox or a queue.Queue")


def peek_messages(inbox: Any) -> list[Message]:
    """Queued :class:`Message` envelopes in arrival order (nothing is removed)."""
    return [env.message for env in _envelopes(inbox) if isinstance(env.message, Message)]


def take_messages(inbox: Any, ids: Collection[UUID | str]) -> list[Message]:
    """Remove and return queued messages whose id is in ``ids`` (owning actor only).

    Asks (envelopes with a reply future) are never removed: their caller waits
    for an answer only a real turn can give.
    """
    wanted = {i if isinstance(i, UUID) else UUID(str(i)) for i in ids}
    if not wanted:
        return []
    taken = [
        env
        for env in _envelopes(inbox)
        if env.reply_to is None and isinstance(env.message, Message) and env.message.id in wanted
    ]
    if isinstance(inbox, Inbox):
        for env in taken:
            inbox.queue.remove(env)
    elif taken:
        with inbox.mutex:
            keep = [env for env in inbox.queue if not any(env is t for t in taken)]
            inbox.queue.clear()
            inbox.queue.extend(keep)
    return [env.message for env in taken]
