"""The built-in ``local`` runtime: the client API over teams in this process.

Every team runs in one :class:`~akgentic.team.manager.TeamManager` (on the
store given to :func:`~akgentic.cluster.connect`); acknowledgements, the
idempotency keys and event streaming behave as on a fleet, so code written
against :class:`~akgentic.cluster.client.RuntimeClient` runs unchanged on
``nats://``. A message to a stopped team resumes it (activation on demand).
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
from collections.abc import Generator, Mapping
from uuid import UUID

from akgentic.cluster.client import Ack, Placement, TeamSummary
from akgentic.cluster.host import TeamHost
from akgentic.core.actor_system import ActorSystem
from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.team.card import TeamCard
from akgentic.team.errors import TeamActivationError, TeamNotFoundError
from akgentic.team.manager import TeamManager
from akgentic.team.models import PersistedEvent, TeamStatus
from akgentic.team.ownership import TeamId, as_team_id
from akgentic.team.store import EventStore

__all__ = ["LocalRuntime", "connect_local"]

logger = logging.getLogger(__name__)


class LocalRuntime:
    """A :class:`~akgentic.cluster.client.RuntimeClient` whose teams run in this process."""

    def __init__(
        self,
        url: str,
        event_store: EventStore,
        *,
        owns_store: bool = True,
        passivate_after: float | None = None,
    ) -> None:
        """Run teams on ``event_store``; ``passivate_after`` (seconds) passivates idle ones.

        Off by default: a command-line session holds its team until it ends.
        """
        self.url = url
        self.worker = f"local:{socket.gethostname()}:{os.getpid()}"
        self._store = event_store
        self._owns_store = owns_store
        self._system = ActorSystem()
        self.manager = TeamManager(self._system, event_store, passivate_after=passivate_after)
        # The local runtime runs the caller's own cards: host processes are theirs to start.
        self.host = TeamHost(self.manager, allow_host_processes=True)
        self._lock = threading.Lock()
        #: Teams this runtime woke from passivation (passivated again on close).
        self._woken: set[UUID] = set()

    def create(
        self,
        card: TeamCard,
        *,
        team_id: TeamId | None = None,
        user_id: str = "cli",
        metadata: SerializableBaseModel | None = None,
    ) -> UUID:
        """Create the team here."""
        uid = None if team_id is None else as_team_id(team_id)
        return self.host.create(card, uid, user_id, metadata).id

    def list_teams(
        self,
        *,
        status: TeamStatus | None = None,
        user_id: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[TeamSummary]:
        """The store's teams matching every filter."""
        found = self.manager.list_teams(user_id=user_id, status=status, metadata=metadata)
        return [TeamSummary.of(process) for process in found]

    def _running(self, team_id: UUID, *, resume: bool = False) -> None:
        with self._lock:
            if self.manager.get_runtime(team_id) is not None:
                return
            process = self.manager.get_team(team_id)
            if process is None:
                raise TeamNotFoundError(team_id)
            if process.status == TeamStatus.BROKEN and not resume:
                # Its activation failed: only an explicit resume tries again.
                raise TeamActivationError(team_id, process.reason or "an activation failed")
            self.host.adopt(team_id, activation=not resume)
            if process.status == TeamStatus.PASSIVATED:
                self._woken.add(team_id)

    def send(
        self, team_id: TeamId, content: str, *, key: str | None = None, timeout: float = 60.0
    ) -> Ack:
        """Deliver once per key, resuming a stopped team first."""
        uid = as_team_id(team_id)
        self._running(uid)
        done = self.host.deliver(uid, content, key, timeout)
        return Ack(
            team_id=uid,
            sequence=done.sequence,
            worker=self.worker,
            epoch=done.epoch,
            key=done.key,
            duplicate=done.duplicate,
        )

    def events(
        self,
        team_id: TeamId,
        *,
        from_sequence: int = 1,
        follow: bool = False,
        idle_timeout: float | None = None,
    ) -> Generator[PersistedEvent, None, None]:
        """Replay from the store, then follow durable events of the team."""
        uid = as_team_id(team_id)
        live: queue.SimpleQueue[PersistedEvent] = queue.SimpleQueue()
        unsubscribe = self.host.listen(uid, live.put) if follow else None
        try:
            last = from_sequence - 1
            for event in self.host.replay(uid, from_sequence):
                last = event.sequence
                yield event
            if unsubscribe is None:
                return
            while True:
                try:
                    event = live.get(timeout=idle_timeout)
                except queue.Empty:
                    return
                if event.sequence > last:
                    last = event.sequence
                    yield event
        finally:
            if unsubscribe is not None:
                unsubscribe()

    def where(self, team_id: TeamId) -> Placement:
        """Here when it runs, else not placed."""
        uid = as_team_id(team_id)
        process = self.manager.get_team(uid)
        if process is None:
            raise TeamNotFoundError(uid)
        running = self.manager.get_runtime(uid) is not None
        return Placement(
            team_id=uid,
            status=str(process.status.value),
            worker=self.worker if running else None,
            epoch=process.epoch,
        )

    def stop(self, team_id: TeamId) -> None:
        """Stop the team (recorded as stopped; ``TeamNotFoundError`` when unknown)."""
        uid = as_team_id(team_id)
        self.manager.stop_team(uid)
        self.host.forget(uid)

    def resume(self, team_id: TeamId) -> Placement:
        """Resume a stopped team here."""
        uid = as_team_id(team_id)
        self._running(uid, resume=True)
        return self.where(uid)

    def delete(self, team_id: TeamId) -> None:
        """Stop (when running) and delete the team (``TeamNotFoundError`` when unknown)."""
        uid = as_team_id(team_id)
        process = self.manager.get_team(uid)
        if process is None:
            raise TeamNotFoundError(uid)
        if process.status == TeamStatus.RUNNING:
            self.stop(uid)
        self.manager.delete_team(uid)

    def close(self) -> None:
        """Stop every team of this process and release the store.

        A team that was passivated when this runtime woke it is passivated again
        (docs/virtual-teams.md), so a ``send`` leaves it as it found it.
        """
        for team_id in sorted(self._woken):
            try:
                self.manager.passivate_team(team_id)
            except Exception as exc:  # stopped below instead
                logger.warning("passivating team %s again failed: %s", team_id, exc)
        self.manager.stop_all()
        self.host.close()
        self._system.shutdown()
        if self._owns_store:
            self._store.close()


def connect_local(url: str, store: str | None) -> LocalRuntime:
    """The ``local`` runtime on the store ``store`` names (default store when ``None``)."""
    from akgentic.team.urls import open_event_store

    return LocalRuntime(url, open_event_store(store))
