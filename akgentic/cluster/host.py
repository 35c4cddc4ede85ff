"""TeamHost: the part of a runtime that runs teams in one process.

Both the built-in ``local`` runtime and a fleet worker hold their teams in a
:class:`~akgentic.team.manager.TeamManager` wrapped by a :class:`TeamHost`,
which adds what the client API promises on top of the manager:

* :meth:`TeamHost.deliver` sends an inbound message under its idempotency key
  and returns once it is durable, with its sequence (a key seen before returns
  the first delivery's sequence, delivering nothing);
* :meth:`TeamHost.listen` calls back with every event of a team once it is
  durable (never an event the store refused, e.g. after the claim was lost);
* :meth:`TeamHost.replay` reads the stored log from a sequence.

The host is also an :class:`~akgentic.core.event_subscriber.EventSubscriber`
shared by every team of its manager: the manager calls subscribers in order,
so when the host sees a message the team's persistence has just numbered it.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any
from uuid import UUID, uuid4

from akgentic.cluster.client import ClusterError, TeamUnavailableError
from akgentic.cluster.keys import inbound_id, inbound_ids, is_inbound_id
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team.card import TeamCard
from akgentic.team.manager import TeamManager
from akgentic.team.models import PersistedEvent
from akgentic.team.runtime import TeamRuntime
from akgentic.team.subscribers.persistence import PersistenceSubscriber

__all__ = ["Delivery", "EventListener", "TeamHost"]

logger = logging.getLogger(__name__)

EventListener = Callable[[PersistedEvent], None]


class Delivery:
    """The outcome of :meth:`TeamHost.deliver`: sequence, key, and whether it was a repeat."""

    __slots__ = ("duplicate", "epoch", "key", "sequence")

    def __init__(self, sequence: int, key: str, duplicate: bool, epoch: int | None) -> None:
        self.sequence = sequence
        self.key = key
        self.duplicate = duplicate
        self.epoch = epoch


class TeamHost:
    """Inbound delivery, durable event listeners and replay over one manager."""

    def __init__(self, manager: TeamManager, *, allow_host_processes: bool | None = None) -> None:
        from akgentic.cluster.admission import host_processes_allowed

        self.manager = manager
        #: Whether created cards may start host processes; None: ask the environment
        #: (``$AKGENTIC_ALLOW_HOST_PROCESSES``), as a worker taking remote placements does.
        self.allow_host_processes = (
            host_processes_allowed(os.environ)
            if allow_host_processes is None
            else allow_host_processes
        )
        self._lock = threading.Lock()
        self._delivered: dict[UUID, dict[UUID, int]] = {}
        self._pending: dict[UUID, Future[int]] = {}
        self._listeners: dict[UUID, list[EventListener]] = {}
        self._restoring: set[UUID] = set()
        self._outbox: queue.SimpleQueue[tuple[PersistenceSubscriber, PersistedEvent] | None] = (
            queue.SimpleQueue()
        )
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="akgentic-cluster-events", daemon=True
        )
        self._dispatcher.start()
        manager.subscribers.append(self)

    # -- lifecycle helpers ------------------------------------------------
    def create(
        self, card: TeamCard, team_id: UUID | None, user_id: str, metadata: Any = None
    ) -> TeamRuntime:
        """Create a team in the manager; returns once its first events are durable.

        ``metadata`` is what ``TeamManager.create_team`` takes (validated there). A card
        that would start host processes is refused unless they are allowed
        (:class:`~akgentic.cluster.admission.HostProcessesRefusedError`).
        """
        from akgentic.cluster.admission import check_host_processes

        check_host_processes(card, allowed=self.allow_host_processes, source="a placed team")
        runtime = self.manager.create_team(
            card, user_id=user_id, team_id=team_id, metadata=metadata
        )
        with self._lock:
            self._delivered.setdefault(runtime.id, {})
        self._flush(runtime.id)
        return runtime

    def adopt(self, team_id: UUID, *, activation: bool = False) -> TeamRuntime:
        """Take the team over (``TeamManager.adopt``) and learn the keys its log delivered.

        ``activation=True``: a message wakes the team (a broken one is refused).
        """
        runtime = self.manager.adopt(team_id, activation=activation)
        # From the checkpoint the team came back from and its tail; the whole log
        # (12.5 s at 100,000 events) only when the checkpoint predates that list.
        persistence = self.manager.get_persistence(team_id)
        known = persistence.inbound_ids() if persistence is not None else None
        if known is None:
            known = inbound_ids(self.manager.event_store.load_events(team_id))
        with self._lock:
            self._delivered.setdefault(team_id, {}).update(known)
        return runtime

    def forget(self, team_id: UUID) -> None:
        """Drop what the host knows of a team that left this process."""
        with self._lock:
            self._delivered.pop(team_id, None)

    def epoch(self, team_id: UUID) -> int | None:
        """The epoch of this process's claim on a team it runs."""
        return self.manager.epoch_of(team_id)

    # -- delivery ---------------------------------------------------------
    def deliver(
        self, team_id: UUID, content: str, key: str | None = None, timeout: float = 60.0
    ) -> Delivery:
        """Send ``content`` to the team's supervisors once per key; wait until durable."""
        runtime = self.manager.get_runtime(team_id)
        if runtime is None:
            raise TeamUnavailableError(f"team {team_id} does not run here")
        key = key or uuid4().hex
        message_id = inbound_id(team_id, key)
        with self._lock:
            delivered = self._delivered.setdefault(team_id, {})
            sequence = delivered.get(message_id)
            waiting = self._pending.get(message_id)
            if sequence is None and waiting is None:
                future: Future[int] = Future()
                self._pending[message_id] = future
        epoch = self.epoch(team_id)
        if sequence is not None:
            return Delivery(sequence, key, True, epoch)
        if waiting is not None:
            return Delivery(self._wait(team_id, waiting, timeout), key, True, epoch)
        try:
            message = self._message(runtime, content)
            message.id = message_id
            runtime.send(message)
            sequence = self._wait(team_id, future, timeout)
        finally:
            with self._lock:
                self._pending.pop(message_id, None)
        return Delivery(sequence, key, False, epoch)

    @staticmethod
    def _message(runtime: TeamRuntime, content: str) -> Message:
        message_type = runtime.team.default_message_type
        if message_type is None:
            raise ClusterError(f"team {runtime.id} declares no message type for text")
        message: Message = message_type(content=content)
        return message

    def _wait(self, team_id: UUID, future: Future[int], timeout: float) -> int:
        try:
            sequence = future.result(timeout)
        except TimeoutError:
            raise TeamUnavailableError(
                f"team {team_id} did not record the message within {timeout:g} s"
            ) from None
        self._flush(team_id, sequence, timeout)
        return sequence

    def _flush(self, team_id: UUID, sequence: int | None = None, timeout: float = 60.0) -> None:
        persistence = self.manager.get_persistence(team_id)
        if persistence is None:
            raise TeamUnavailableError(f"team {team_id} left this process")
        persistence.flush(timeout)
        if sequence is not None and persistence.durable_sequence < sequence:
            raise TeamUnavailableError(f"team {team_id}: event {sequence} is not durable")

    # -- events -----------------------------------------------------------
    def listen(self, team_id: UUID, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with each durable event of the team; returns the unsubscribe."""
        with self._lock:
            self._listeners.setdefault(team_id, []).append(listener)

        def unsubscribe() -> None:
            with self._lock:
                listeners = self._listeners.get(team_id, [])
                if listener in listeners:
                    listeners.remove(listener)
                if not listeners:
                    self._listeners.pop(team_id, None)

        return unsubscribe

    def replay(self, team_id: UUID, from_sequence: int = 1) -> list[PersistedEvent]:
        """Stored events of the team with ``sequence >= from_sequence``."""
        events = self.manager.event_store.load_events(team_id)
        return [event for event in events if event.sequence >= from_sequence]

    # -- EventSubscriber --------------------------------------------------
    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """A replay of history is not new: it is neither indexed nor published."""
        with self._lock:
            if restoring:
                self._restoring.add(team_id)
            else:
                self._restoring.discard(team_id)

    def on_message(self, msg: Message) -> None:
        """Number inbound messages and queue durable-event callbacks (orchestrator thread)."""
        team_id = msg.team_id
        if team_id is None and isinstance(msg, SentMessage):
            team_id = msg.message.team_id
        if team_id is None or team_id in self._restoring:
            return
        persistence = self.manager.get_persistence(team_id)
        if persistence is None:
            return
        sequence = persistence.sequence
        if isinstance(msg, SentMessage) and is_inbound_id(msg.message.id):
            with self._lock:
                self._delivered.setdefault(team_id, {}).setdefault(msg.message.id, sequence)
                future = self._pending.get(msg.message.id)
            if future is not None and not future.done():
                future.set_result(sequence)
        if team_id in self._listeners:
            event = PersistedEvent(team_id=team_id, sequence=sequence, event=msg)
            self._outbox.put((persistence, event))

    def on_stop(self, team_id: UUID) -> None:
        """Nothing to do: listeners stay until unsubscribed."""

    def on_stop_request(self, team_id: UUID) -> None:
        """Nothing to do."""

    def _dispatch(self) -> None:
        while True:
            item = self._outbox.get()
            if item is None:
                return
            persistence, event = item
            if persistence.durable_sequence < event.sequence:
                try:
                    persistence.flush(30.0)
                except Exception as exc:  # refused (claim lost) or stopped: not durable
                    logger.debug("event %s not published: %s", event.sequence, exc)
                    continue
                if persistence.durable_sequence < event.sequence:
                    continue
            with self._lock:
                listeners = list(self._listeners.get(event.team_id, ()))
            for listener in listeners:
                try:
                    listener(event)
                except Exception:
                    logger.exception("event listener failed")

    def close(self) -> None:
        """Stop the dispatcher thread (the manager is not stopped)."""
        self._outbox.put(None)
        if self in self.manager.subscribers:
            self.manager.subscribers.remove(self)
