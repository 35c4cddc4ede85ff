"""SendGate: holds ``TeamRuntime`` sends back while a team's record lags behind.

A team's messages are delivered at once, but each one leaves events that the
orchestrator records and the persistence subscriber writes in batches. When
the store is slower than the team, those events would pile up without bound
(first in the orchestrator's inbox, then in the writer's queue) and the log
would fall ever further behind what the members already did. The gate bounds
that backlog with a queue of about one batch: before a message goes in, it
counts what is upstream of the store (for a managed team: the envelopes waiting
in the entry point's and the orchestrator's inboxes) plus the events recorded
but not yet taken by the writer, and when the sum exceeds ``max_backlog`` the
sending thread waits until the writer takes that queue as its next batch (the
sum is down to half of the bound). The batch being committed is not counted,
so the next one fills while the current one is on its way to disk; the store
therefore trails delivery by at most the batch in flight plus one queued batch.

Exactly, for one sending thread: the count is read upstream first, so an envelope
the orchestrator records between the two reads is counted (twice at worst), never
missed; it grows only by an admission, made at most at ``max_backlog``, so it stays
within ``max_backlog + 1`` records plus the one envelope the orchestrator holds
between its inbox and the writer's queue. In events that is ``max_backlog + 2``
when each envelope is one event (``emitMessage``), up to three times that for a
member's turn. A member's own inbox is not counted: a slow member delays its own
work, and the events of its turns add to the queue when it takes them.
:attr:`SendGate.held` says how many senders are waiting.

The wait is bounded by ``timeout``: a store stuck for that long makes ``send``
raise :class:`BackpressureTimeoutError` rather than queue forever. The gate
never waits on the orchestrator's own thread (a subscriber sending into its
team would wait on itself) nor once persistence has stopped after a failed
write (that failure is reported by the persistence subscriber).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from akgentic.team.errors import EventStoreError
from akgentic.team.subscribers.persistence import PersistenceSubscriber

__all__ = [
    "DEFAULT_MAX_BACKLOG",
    "DEFAULT_SEND_TIMEOUT",
    "BackpressureTimeoutError",
    "SendGate",
]

#: Records (envelopes upstream plus events queued for the writer) a team may have
#: waiting before ``send`` waits. One envelope upstream becomes up to three events,
#: so a batch holds up to about two hundred events. Measured on the end-to-end bench,
#: larger queues gave no more throughput but a longer lag (and more CPU per message).
DEFAULT_MAX_BACKLOG = 64
#: Seconds a blocked ``send`` waits for the store before giving up.
DEFAULT_SEND_TIMEOUT = 60.0


class BackpressureTimeoutError(EventStoreError, TimeoutError):
    """The store did not catch up within the gate's timeout; the message was not sent."""


class SendGate:
    """Admission control of one team's sends (see the module docstring)."""

    def __init__(
        self,
        persistence: PersistenceSubscriber,
        upstream: Callable[[], int],
        *,
        max_backlog: int = DEFAULT_MAX_BACKLOG,
        timeout: float = DEFAULT_SEND_TIMEOUT,
        exempt_thread: Callable[[], int | None] | None = None,
    ) -> None:
        if max_backlog < 1:
            raise ValueError(f"max_backlog must be >= 1, not {max_backlog}")
        self.persistence = persistence
        self.upstream = upstream
        self.max_backlog = max_backlog
        self.timeout = timeout
        self._exempt_thread = exempt_thread
        self._held = 0
        self._held_lock = threading.Lock()

    @property
    def backlog(self) -> int:
        """Records currently between delivery and the store (the batch in flight included)."""
        return self.persistence.backlog + self.upstream()

    @property
    def queued(self) -> int:
        """Records the gate bounds: upstream envelopes plus events not yet taken by the writer."""
        return self.upstream() + self.persistence.queued  # order: see admit

    @property
    def held(self) -> int:
        """Sending threads currently waiting in :meth:`admit` for the store."""
        return self._held

    def admit(self) -> None:
        """Return once there is room for one more message (see the module docstring)."""
        persistence = self.persistence
        limit = self.max_backlog
        # Upstream first: the orchestrator moves envelopes from its inbox into the
        # writer's queue meanwhile, so reading the queue first could miss them in both
        # counts and admit past the bound; this order can only over-count.
        if self.upstream() + persistence.queued <= limit:
            return
        exempt = self._exempt_thread
        if exempt is not None and exempt() == threading.get_ident():
            return
        with self._held_lock:
            self._held += 1
        try:
            room = persistence.wait_for_queue(limit // 2, self.upstream, self.timeout)
        finally:
            with self._held_lock:
                self._held -= 1
        if not room:
            raise BackpressureTimeoutError(
                f"team {persistence.team_id}: the event store has not caught up with "
                f"{self.backlog} record(s) in {self.timeout} s; message not sent"
            )

    def __repr__(self) -> str:
        return f"SendGate(team_id={self.persistence.team_id}, max_backlog={self.max_backlog})"
