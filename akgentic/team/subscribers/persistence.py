"""PersistenceSubscriber: writes a team's event stream into an event store.

Every message the orchestrator reports takes exactly one of two tracks:

* a :class:`~akgentic.core.messages.StateChangedMessage` with a sender becomes
  the agent's latest :class:`~akgentic.team.models.AgentStateSnapshot`
  (an upsert; it consumes no sequence number and is not part of the log); one
  without a sender has no agent to file it under and is dropped;
* anything else is appended to the log with the next sequence number, gap-free.

While the team layer replays a stored history (``set_restoring(team_id,
True)``) nothing is written, and a resumed team continues numbering from
``initial_sequence`` (the store's ``get_max_sequence``).

Two write modes:

* **direct** (``batching=False``): ``on_message`` returns once the store has
  acknowledged the write. A write the store refuses raises there and the
  sequence number is handed out again to the next message.
* **batched** (the default when the store offers ``save_events``): messages
  are numbered on the caller's thread and written by the process's shared
  writers (:mod:`akgentic.team.subscribers.writers`), one batch of a subscriber
  at a time: each batch is everything that queued up meanwhile, committed in
  one durable transaction (group commit). The store then always holds a gap-free
  prefix of the stream, in order. An event counts as acknowledged once
  :attr:`durable_sequence` has reached it; :meth:`flush` waits for that, and
  ``on_stop`` flushes, so a stopped team has everything on disk. A refused
  batch is written again one event at a time (see below); a write that still
  fails stops persistence for this team: the error is logged, and raised by
  the next ``on_message`` and by :meth:`flush`.

One event the store refuses (a value its encoding or a size limit rejects)
never stops a team's persistence: it is **quarantined**. An
:class:`~akgentic.team.messages.EventQuarantined` record takes its sequence
number (the log stays gap-free) and keeps the refused message's text, in
ASCII, for inspection; an error line is logged. Only when the store refuses
that record too is the store, not the event, at fault, and persistence stops.

With ``epoch`` (the team manager passes its claim's), every write is fenced:
the store refuses it once another owner claimed the team
(:class:`~akgentic.team.errors.TeamClaimLostError`), persistence stops, and
``on_failure`` (when given) hears of it so the owner can stop the team.

Under sustained load the writer commits one batch while the next one queues,
so the store trails the stream by at most the batch in flight plus what
arrived meanwhile. Two bounds keep that finite: ``max_pending`` holds the
caller of ``on_message`` (the orchestrator) when the queue is that long, and
:meth:`wait_for_room` lets a producer upstream (``TeamRuntime.send``, through a
:class:`~akgentic.team.backpressure.SendGate`) wait until the backlog is small
again, so a store that cannot keep up slows the senders down instead of
letting the lag grow.

A view kept from the log (a protocol's task ledger, say) can follow it without
reading back what was just written: :meth:`add_stored_listener` hands each
listener the events the store acknowledged, in order, right after each commit
(and before any :meth:`durable` waiter is woken), exactly as stored (a
quarantined event as its record).

A snapshot that fails to save is lost until the agent's state changes again
(there is no log entry to rebuild it from), which is why failures are logged
loudly in both modes; a refused snapshot does not stop a batched writer.
"""

from __future__ import annotations

import atexit
import contextlib
import heapq
import itertools
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import StateChangedMessage
from akgentic.core.utils.fastmodel import (
    new_instance,
    set_dict,
    set_extra,
    set_fields_set,
    set_private,
)
from akgentic.team.errors import EventStoreError, TeamClaimLostError
from akgentic.team.messages import EventQuarantined
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, utc_now
from akgentic.team.store import BatchEventStore, EventStore
from akgentic.team.subscribers.quarantine import quarantined
from akgentic.team.subscribers.writers import writer_pool

if TYPE_CHECKING:
    # asyncio (with ssl and subprocess) costs ~15 ms at import, and only a protocol
    # server's waiter ever awaits: `durable` imports it when called.
    import asyncio

    from akgentic.team.checkpoint import Checkpointer

__all__ = ["PersistenceStoppedError", "PersistenceSubscriber"]

logger = logging.getLogger(__name__)

_Record = PersistedEvent | AgentStateSnapshot
_live: weakref.WeakSet[PersistenceSubscriber] = weakref.WeakSet()
#: Longest a waiter of :meth:`PersistenceSubscriber.wait_for_room` sleeps between checks.
_RECHECK = 0.05


_EVENT_FIELDS = frozenset(("team_id", "sequence", "event", "timestamp"))
#: :func:`~akgentic.team.models.utc_now` without its Python frame (once per event).
_now = partial(datetime.now, UTC)


def _new_event(
    team_id: UUID, sequence: int, msg: object, now: datetime | None = None
) -> PersistedEvent:
    """``PersistedEvent(...)`` without validation: every value comes from the subscriber.

    The orchestrator calls this once per recorded message; validating fields it
    just built (and the message, already a model) is most of the model's cost.
    """
    if not isinstance(msg, Message):  # not what the orchestrator hands over: validate
        return PersistedEvent(team_id=team_id, sequence=sequence, event=msg)
    event = new_instance(PersistedEvent)
    stamp = _now() if now is None else now
    set_dict(event, {"team_id": team_id, "sequence": sequence, "event": msg, "timestamp": stamp})
    set_fields_set(event, set(_EVENT_FIELDS))
    set_extra(event, None)
    set_private(event, None)
    return event


class PersistenceStoppedError(EventStoreError):
    """A batched write failed earlier, so this team's persistence has stopped."""


class PersistenceSubscriber:
    """Event subscriber that persists one team's messages and agent states.

    ``batching=None`` picks batched writes when the store supports them.
    ``max_pending`` bounds the queue of a batched subscriber: a producer that
    gets that far ahead of the disk waits (back-pressure) instead of growing
    memory without limit.
    """

    def __init__(
        self,
        team_id: UUID,
        event_store: EventStore,
        initial_sequence: int = 0,
        *,
        batching: bool | None = None,
        max_pending: int = 10_000,
        epoch: int | None = None,
        on_failure: Callable[[UUID, BaseException], None] | None = None,
    ) -> None:
        if initial_sequence < 0:
            raise ValueError(f"initial_sequence must be >= 0, not {initial_sequence}")
        if max_pending < 1:
            raise ValueError(f"max_pending must be >= 1, not {max_pending}")
        can_batch = isinstance(event_store, BatchEventStore)
        if batching and not can_batch:
            raise TypeError(f"{type(event_store).__name__} has no save_events: cannot batch")
        self.team_id = team_id if isinstance(team_id, UUID) else UUID(str(team_id))
        self.event_store = event_store
        self.batching = can_batch if batching is None else batching
        self.max_pending = max_pending
        self.epoch = epoch
        self.on_failure = on_failure
        self._fence: dict[str, Any] = {} if epoch is None else {"epoch": epoch}
        self._sequence = initial_sequence
        self._durable = initial_sequence
        # Highest sequence the writer has taken off the queue (written or being written).
        self._taken = initial_sequence
        self._restoring = False
        lock = self._lock = threading.RLock()
        # Progress (a batch written, a failure, a drained queue) is announced on _cond.
        self._cond = threading.Condition(lock)
        self._pending: list[_Record] = []
        self._writing = False
        self._failure: BaseException | None = None
        # A write job of this subscriber is queued in the writer pool or running.
        self._scheduled = False
        # when_durable callbacks: (sequence, tie-breaker, callback), lowest sequence first.
        self._on_durable: list[tuple[int, int, Callable[[], None]]] = []
        self._tie = itertools.count()
        # add_stored_listener callbacks; replaced (never changed) so the writer reads
        # them without the lock.
        self._stored_listeners: tuple[Callable[[Sequence[PersistedEvent]], None], ...] = ()
        #: Sees every event numbered here and adds a checkpoint after it when one is
        #: due (:mod:`akgentic.team.checkpoint`); ``None``: no checkpoints.
        self.checkpointer: Checkpointer | None = None

    # -- state ------------------------------------------------------------
    @property
    def sequence(self) -> int:
        """The sequence number given to the last event (``initial_sequence`` before any)."""
        return self._sequence

    @property
    def durable_sequence(self) -> int:
        """The highest sequence the store has acknowledged (everything below it too)."""
        return self._durable

    @property
    def backlog(self) -> int:
        """Events numbered but not yet acknowledged by the store (0 in direct mode)."""
        return self._sequence - self._durable

    @property
    def queued(self) -> int:
        """Events numbered but not yet taken by the writer (the batch in flight excluded)."""
        return self._sequence - self._taken

    @property
    def restoring(self) -> bool:
        """Whether a replay is in progress (nothing is written meanwhile)."""
        return self._restoring

    # -- EventSubscriber hooks --------------------------------------------
    def on_message(self, msg: Message) -> None:
        """Persist ``msg``: state snapshots are upserted, everything else appended."""
        if self._restoring:
            return
        if isinstance(msg, StateChangedMessage):
            snapshot = self._snapshot(msg)
            if snapshot is not None:
                self._submit_state(snapshot)
            return
        with self._lock:  # the condition's lock, without the Condition's Python wrapper
            self._append(msg)

    def on_messages(self, msgs: Sequence[Message]) -> None:
        """:meth:`on_message` for each, in order, under one lock and with one timestamp."""
        if self._restoring:
            return
        # The messages of one envelope were recorded in one orchestrator turn:
        # their events share one timestamp.
        now = _now()
        with self._lock:
            for msg in msgs:
                if isinstance(msg, StateChangedMessage):
                    self.on_message(msg)  # the lock is re-entrant
                else:
                    self._append(msg, now)

    def _append(self, msg: Message, now: datetime | None = None) -> None:
        """Number ``msg`` and write or queue it (caller holds the lock)."""
        if self._failure is not None:
            if isinstance(self._failure, TeamClaimLostError):
                return  # another owner has the team: drop quietly while this copy stops
            self._raise_if_stopped()
        sequence = self._sequence + 1
        event = _new_event(self.team_id, sequence, msg, now)
        if not self.batching:
            try:
                stored = self._save_or_quarantine(event)
            except TeamClaimLostError as exc:
                self._failure = exc
                self._report(exc)
                raise
            self._sequence = self._durable = self._taken = sequence
            self._tell_stored([stored])
        else:
            self._sequence = sequence
            self._enqueue(event)
        checkpointer = self.checkpointer
        if checkpointer is not None:
            follow = checkpointer.observe(event)
            if follow is not None:
                self._append(follow, now)

    def inbound_ids(self) -> dict[UUID, int] | None:
        """Name-based ids of the messages sent into the team -> sequence of the first.

        What the checkpoint fold knows (:attr:`CheckpointFold.inbound`): read from the
        checkpoint a restore started from and the events since. ``None`` when it
        cannot tell (no checkpointer, or the team came back from a version 1
        checkpoint): read the log then.
        """
        with self._lock:
            checkpointer = self.checkpointer
            if checkpointer is None or not checkpointer.fold.inbound_complete:
                return None
            return checkpointer.fold.inbound.copy()

    def write_checkpoint(self) -> int | None:
        """Append a checkpoint of everything numbered so far; returns its sequence.

        ``None`` without a checkpointer, while restoring, or when the last event
        numbered is a checkpoint already. The checkpoint is acknowledged like any
        event (:meth:`flush`).
        """
        with self._lock:
            checkpointer = self.checkpointer
            if checkpointer is None or self._restoring:
                return None
            checkpoint = checkpointer.make()
            if checkpoint is None:
                return None
            self._append(checkpoint)
            return self._sequence

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """Suspend (True) or resume (False) writing, around a replay of this team."""
        self._check_team(team_id)
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        """Teardown began: nothing to do yet (the team still reports its last messages)."""
        self._check_team(team_id)

    def on_stop(self, team_id: UUID) -> None:
        """The team is stopping: write everything still queued and end the writer thread."""
        self._check_team(team_id)
        try:
            self.close()
        except PersistenceStoppedError:
            if not isinstance(self._failure, TeamClaimLostError):
                raise  # a lost claim is reported by the owner; anything else is news here

    # -- batching ---------------------------------------------------------
    def wait_for_room(
        self, limit: int, upstream: Callable[[], int], timeout: float | None = None
    ) -> bool:
        """Wait until ``backlog + upstream()`` is at most ``limit``; ``False`` on timeout.

        ``upstream`` counts what is still on its way to this subscriber (for a
        managed team, the envelopes in the entry point's and the orchestrator's
        inboxes). The check runs again after every written batch,
        and at least every :data:`_RECHECK` seconds for the upstream part. Returns
        ``True`` at once when persistence has stopped: waiting would never end,
        and the failure is raised by :meth:`flush` and ``on_message``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._failure is None and self._sequence - self._durable + upstream() > limit:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(_RECHECK if remaining is None else min(remaining, _RECHECK))
        return True

    def wait_for_queue(
        self, limit: int, upstream: Callable[[], int], timeout: float | None = None
    ) -> bool:
        """Wait until ``queued + upstream()`` is at most ``limit``; ``False`` on timeout.

        Like :meth:`wait_for_room`, but the batch the writer is committing does
        not count: the caller may fill the next batch while the current one is
        on its way to disk. The check runs again whenever the writer takes a
        batch or finishes one, and at least every :data:`_RECHECK` seconds for
        the upstream part; ``True`` at once when persistence has stopped.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._failure is None and self._sequence - self._taken + upstream() > limit:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(_RECHECK if remaining is None else min(remaining, _RECHECK))
        return True

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every event handed to the subscriber is acknowledged by the store.

        Raises ``TimeoutError`` after ``timeout`` seconds, or the write failure
        that stopped persistence.
        """
        with self._cond:
            done = self._cond.wait_for(
                lambda: self._failure is not None or (not self._pending and not self._writing),
                timeout,
            )
            self._raise_if_stopped()
            if not done:
                raise TimeoutError(
                    f"team {self.team_id}: {len(self._pending)} record(s) still not written "
                    f"after {timeout}s"
                )

    def when_durable(self, sequence: int, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the store acknowledged ``sequence``, or persistence stopped.

        Called at once (on the caller's thread) when that is the case already,
        otherwise on the writer's thread right after the commit, without any lock
        held: it must be quick and must not raise (an asyncio waiter passes a
        ``loop.call_soon_threadsafe``). The waiter checks :attr:`durable_sequence`
        (or :meth:`flush`, which raises the failure) to tell which it was. This is
        :meth:`flush` for a waiter that must not hold a thread while it waits.
        """
        with self._lock:
            if self._durable < sequence and self._failure is None:
                heapq.heappush(self._on_durable, (sequence, next(self._tie), callback))
                return
        callback()

    def add_stored_listener(self, listener: Callable[[Sequence[PersistedEvent]], None]) -> None:
        """Call ``listener(events)`` with every batch of events the store acknowledges.

        ``events`` are the records just stored, in sequence order, each exactly as
        written (an event the store refused as its ``EventQuarantined`` record), so a
        view folded from them equals one folded from the store. Batched: called on
        the writer's thread right after the commit, before the :meth:`durable`
        waiters it fulfils are woken; direct: on the thread that recorded the
        event, once it is written. No lock is held; the listener must be quick and
        thread-safe. Only events stored after this call are passed: a listener
        that needs the earlier ones reads them from the store first. An exception
        it raises is logged and changes nothing else.
        """
        with self._lock:
            self._stored_listeners = (*self._stored_listeners, listener)

    def remove_stored_listener(self, listener: Callable[[Sequence[PersistedEvent]], None]) -> None:
        """Stop calling ``listener`` (nothing happens when it was not added)."""
        with self._lock:
            self._stored_listeners = tuple(f for f in self._stored_listeners if f != listener)

    def _tell_stored(self, events: Sequence[PersistedEvent]) -> None:
        for listener in self._stored_listeners:
            try:
                listener(events)
            except Exception:
                logger.exception("a stored-events listener of team %s failed", self.team_id)

    async def durable(self, sequence: int | None = None, timeout: float = 10.0) -> None:
        """Wait on the running event loop, holding no thread, until ``sequence`` is stored.

        ``sequence`` defaults to the last one numbered (everything recorded so far).
        Returns at once when the store acknowledged it already; otherwise the
        writer wakes this waiter right after the commit covering it
        (:meth:`when_durable`), not when the whole queue is empty as :meth:`flush`
        does. Raises the failure that stopped persistence, or ``TimeoutError``.
        """
        target = self._sequence if sequence is None else sequence
        if self._durable >= target:
            return
        import asyncio

        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
                loop.call_soon_threadsafe(_resolve, done)

        self.when_durable(target, wake)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, timeout)
        if self._durable < target:
            with self._lock:
                self._raise_if_stopped()
            raise TimeoutError(
                f"team {self.team_id}: event {target} not stored after {timeout}s "
                f"(stored up to {self._durable})"
            )

    def _durable_callbacks(self) -> list[Callable[[], None]]:
        """Pop the callbacks the acknowledged sequence (or a failure) fulfils (lock held)."""
        waiting = self._on_durable
        if not waiting:
            return []
        if self._failure is not None:
            self._on_durable = []
            return [entry[2] for entry in waiting]
        ready = []
        while waiting and waiting[0][0] <= self._durable:
            ready.append(heapq.heappop(waiting)[2])
        return ready

    @staticmethod
    def _call_all(callbacks: list[Callable[[], None]]) -> None:
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("a when_durable callback failed")

    def close(self, timeout: float | None = 60.0) -> None:
        """Wait until everything queued is written (the writers are shared: none to stop)."""
        self.flush(timeout)

    def _enqueue(self, record: _Record) -> None:
        """Queue a record for the writer (caller holds the condition)."""
        pending = self._pending
        pending.append(record)
        if not self._scheduled:
            self._schedule()
        while len(self._pending) >= self.max_pending and self._failure is None:
            self._cond.wait()

    def _schedule(self) -> None:
        """Hand this subscriber to the writer pool (caller holds the condition)."""
        self._scheduled = True
        _live.add(self)
        try:
            writer_pool().submit(self._write_next)
        except BaseException:
            self._scheduled = False
            raise

    def _write_next(self) -> None:
        """One batch: everything queued now, written in one transaction (a pool job).

        With more queued meanwhile, the subscriber goes back into the pool's queue
        behind the other teams' jobs; only when that fails (no thread can be
        started, at interpreter exit) does this job write on.
        """
        while self._write_batch():
            try:
                writer_pool().submit(self._write_next)
                return
            except RuntimeError:
                continue

    def _write_batch(self) -> bool:
        """Write one batch; True when more is queued (this subscriber stays scheduled)."""
        with self._cond:
            if not self._pending or self._failure is not None:
                self._scheduled = False
                self._cond.notify_all()
                return False
            batch, self._pending = self._pending, []
            self._taken = self._sequence
            self._writing = True
            self._cond.notify_all()
        try:
            stored = self._write(batch)
        except BaseException as exc:
            if not isinstance(exc, TeamClaimLostError):  # that one the owner reports
                logger.error(
                    "persistence of team %s stopped: writing %d record(s) failed: %s",
                    self.team_id,
                    len(batch),
                    exc,
                )
            with self._cond:
                self._failure = exc
                self._pending = []
                self._taken = self._sequence
                self._writing = False
                self._scheduled = False
                self._cond.notify_all()
                callbacks = self._durable_callbacks()
            self._call_all(callbacks)
            self._report(exc)
            return False
        if stored:
            self._tell_stored(stored)
        with self._cond:
            self._writing = False
            self._cond.notify_all()
            callbacks = self._durable_callbacks()
            more = bool(self._pending) and self._failure is None
            if not more:
                self._scheduled = False
        self._call_all(callbacks)
        return more

    def _write(self, batch: list[_Record]) -> list[PersistedEvent]:
        """Write ``batch``; the events as stored (quarantine records in their place)."""
        events = [r for r in batch if isinstance(r, PersistedEvent)]
        latest: dict[str, AgentStateSnapshot] = {}
        for record in batch:
            if isinstance(record, AgentStateSnapshot):
                latest[record.agent_id] = record
        # Events first: a snapshot then never describes a point past the stored log.
        if events:
            store = self.event_store
            assert isinstance(store, BatchEventStore)
            try:
                store.save_events(events, **self._fence)
            except TeamClaimLostError:
                raise
            except Exception as exc:
                # Batches are atomic: nothing of this one is stored. Find the
                # event(s) the store refuses, one by one.
                logger.warning(
                    "team %s: a batch of %d event(s) was refused (%s); writing them one by one",
                    self.team_id,
                    len(events),
                    exc,
                )
                stored = []
                for event in events:
                    stored.append(self._save_or_quarantine(event))
                    with self._cond:
                        self._durable = event.sequence
                self._save_states(latest.values())
                return stored
            with self._cond:
                self._durable = events[-1].sequence
        self._save_states(latest.values())
        return events

    def _save_states(self, snapshots: Iterable[AgentStateSnapshot]) -> None:
        for snapshot in snapshots:
            try:
                self._save_state(snapshot)
            except TeamClaimLostError:
                raise
            except Exception:  # logged by _save_state; the next change saves it again
                continue

    def _save_one(self, event: PersistedEvent) -> None:
        store = self.event_store
        if isinstance(store, BatchEventStore) and self.batching:
            store.save_events([event], **self._fence)
        else:
            store.save_event(event, **self._fence)

    def _save_or_quarantine(self, event: PersistedEvent) -> PersistedEvent:
        """Write ``event``; if the store refuses it, write its quarantine record instead.

        Returns what was stored. When the store refuses the record too, the store
        itself is failing (not this event): that error is raised, and persistence
        stops as before.
        """
        try:
            self._save_one(event)
            return event
        except TeamClaimLostError:
            raise
        except Exception as exc:
            refusal = exc
        record = quarantined(event, refusal)
        try:
            self._save_one(record)
        except TeamClaimLostError:
            raise
        except Exception as exc:
            raise exc from refusal
        stand_in = record.event
        assert isinstance(stand_in, EventQuarantined)
        logger.error(
            "team %s: the store refused event %d (%s) and it was quarantined: an "
            "EventQuarantined record keeps it at that sequence; persistence goes on (%s)",
            self.team_id,
            event.sequence,
            stand_in.event_type,
            stand_in.reason,
        )
        return record

    # -- states -----------------------------------------------------------
    def _snapshot(self, msg: StateChangedMessage) -> AgentStateSnapshot | None:
        sender = msg.sender
        if sender is None:
            logger.debug("state change without a sender in team %s: not persisted", self.team_id)
            return None
        return AgentStateSnapshot(
            team_id=self.team_id,
            agent_id=str(sender.agent_id),
            name=sender.name,
            state=msg.state,
            updated_at=utc_now(),
        )

    def _submit_state(self, snapshot: AgentStateSnapshot) -> None:
        with self._cond:
            if isinstance(self._failure, TeamClaimLostError):
                return
            self._raise_if_stopped()
            if self.batching:
                self._enqueue(snapshot)
                return
        self._save_state(snapshot)

    def _save_state(self, snapshot: AgentStateSnapshot) -> None:
        try:
            self.event_store.save_agent_state(snapshot, **self._fence)
        except TeamClaimLostError as exc:
            with self._cond:
                self._failure = exc
            self._report(exc)
            raise
        except Exception:
            logger.error(
                "state of agent %s (%s) in team %s could not be saved and is lost until it "
                "changes again",
                snapshot.name,
                snapshot.agent_id,
                self.team_id,
            )
            raise

    # -- helpers ----------------------------------------------------------
    def _report(self, exc: BaseException) -> None:
        if self.on_failure is None:
            return
        try:
            self.on_failure(self.team_id, exc)
        except Exception:
            logger.exception("the failure handler of team %s failed", self.team_id)

    def _raise_if_stopped(self) -> None:
        if self._failure is not None:
            raise PersistenceStoppedError(
                f"persistence of team {self.team_id} stopped after a failed write "
                f"(last acknowledged sequence {self._durable}): {self._failure}"
            ) from self._failure

    def _check_team(self, team_id: UUID) -> None:
        if team_id != self.team_id:
            raise ValueError(
                f"PersistenceSubscriber of team {self.team_id} was called for team {team_id}"
            )

    def __repr__(self) -> str:
        return (
            f"PersistenceSubscriber(team_id={self.team_id}, sequence={self._sequence}, "
            f"durable={self._durable}, batching={self.batching})"
        )


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@atexit.register
def _flush_at_exit() -> None:
    """A process that exits without stopping its teams still writes what it queued."""
    for subscriber in list(_live):
        try:
            subscriber.close(timeout=10.0)
        except PersistenceStoppedError as exc:
            if isinstance(exc.__cause__, TeamClaimLostError):
                continue  # reported when the claim was lost; nothing may be written
            logger.error("team %s: events lost at exit: %s", subscriber.team_id, exc)
        except Exception as exc:
            logger.error("team %s: events lost at exit: %s", subscriber.team_id, exc)
