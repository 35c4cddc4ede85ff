"""TeamManager: the lifecycle of teams, backed by an event store.

::

    create_team()          stop_team()          delete_team()
  ---------------> RUNNING -----------> STOPPED -------------> (gone)
                      ^                    |
                      +--- resume_team() --+

Each running team gets, in this order, a
:class:`~akgentic.team.subscribers.PersistenceSubscriber` (writes its events),
an :class:`~akgentic.team.subscribers.IdleStopSubscriber` (stops it after
``ORCHESTRATOR_TIMEOUT_DELAY`` idle seconds) and the shared subscribers given
to the manager, which are called from many orchestrator threads and must be
thread-safe. Its runtime gets a :class:`~akgentic.team.backpressure.SendGate`:
``send`` waits while more than ``max_backlog`` records are between delivery
and the store. A team that fails to build leaves nothing behind: its actors are
stopped, its idle countdown closed and no record is written.

Operations on one team are serialised; operations on different teams run in
parallel.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID, uuid4

from akgentic.core._pykka_seam import thread_of
from akgentic.core.actor_system import ActorSystem
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.mailbox import queued_count
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import actor_ref_of
from akgentic.team.backpressure import DEFAULT_MAX_BACKLOG, SendGate
from akgentic.team.card import TeamCard
from akgentic.team.errors import TeamNotFoundError, TeamStateError
from akgentic.team.factory import TeamFactory
from akgentic.team.models import Process, TeamStatus, validate_metadata
from akgentic.team.restorer import TeamRestorer
from akgentic.team.runtime import TeamRuntime
from akgentic.team.services import NullServiceRegistry, ServiceRegistry
from akgentic.team.store import EventStore
from akgentic.team.subscribers.idle import IdleStopSubscriber
from akgentic.team.subscribers.persistence import PersistenceSubscriber

__all__ = ["STOP_GRACE", "TeamManager"]

logger = logging.getLogger(__name__)

#: Seconds a team is given to stop before its orchestrator forces the end.
STOP_GRACE = 30.0


class TeamManager:
    """Create, stop, resume, delete and list teams (see the module docstring)."""

    def __init__(
        self,
        actor_system: ActorSystem,
        event_store: EventStore,
        service_registry: ServiceRegistry | None = None,
        subscribers: Sequence[EventSubscriber] | None = None,
        instance_id: UUID | None = None,
        *,
        idle_delay: float | None = None,
        max_backlog: int = DEFAULT_MAX_BACKLOG,
    ) -> None:
        self.actor_system = actor_system
        self.event_store = event_store
        self.service_registry: ServiceRegistry = service_registry or NullServiceRegistry()
        self.subscribers: list[EventSubscriber] = list(subscribers or ())
        self.instance_id = instance_id or uuid4()
        self.idle_delay = idle_delay
        self.max_backlog = max_backlog
        self._runtimes: dict[UUID, TeamRuntime] = {}
        self._persistence: dict[UUID, PersistenceSubscriber] = {}
        self._idle: dict[UUID, IdleStopSubscriber] = {}
        self._locks: dict[UUID, threading.RLock] = {}
        self._guard = threading.Lock()
        self.service_registry.register_instance(self.instance_id)

    # -- helpers ------------------------------------------------------------
    def _lock(self, team_id: UUID) -> threading.RLock:
        with self._guard:
            lock = self._locks.get(team_id)
            if lock is None:
                lock = self._locks[team_id] = threading.RLock()
            return lock

    def _require(self, team_id: UUID) -> Process:
        process = self.event_store.load_team(team_id)
        if process is None:
            raise TeamNotFoundError(team_id)
        return process

    def _team_subscribers(
        self, team_id: UUID, initial_sequence: int
    ) -> tuple[PersistenceSubscriber, IdleStopSubscriber, list[EventSubscriber]]:
        persistence = PersistenceSubscriber(team_id, self.event_store, initial_sequence)
        idle = IdleStopSubscriber(self, team_id, self.idle_delay)
        return persistence, idle, [persistence, idle, *self.subscribers]

    def _track(
        self,
        runtime: TeamRuntime,
        persistence: PersistenceSubscriber,
        idle: IdleStopSubscriber,
    ) -> None:
        runtime.attach_gate(self._gate(runtime, persistence))
        with self._guard:
            self._runtimes[runtime.id] = runtime
            self._persistence[runtime.id] = persistence
            self._idle[runtime.id] = idle

    def _gate(self, runtime: TeamRuntime, persistence: PersistenceSubscriber) -> SendGate:
        """Backpressure on the runtime's sends (see :mod:`akgentic.team.backpressure`).

        Upstream of the writer's queue are the orchestrator's inbox (telemetry
        not yet recorded) and the entry point's (sends not yet made).
        """
        ref = actor_ref_of(runtime.orchestrator_addr)
        inbox = ref.actor_inbox
        entry_inbox = actor_ref_of(runtime.entry_addr).actor_inbox
        return SendGate(
            persistence,
            lambda: queued_count(inbox) + queued_count(entry_inbox),
            max_backlog=self.max_backlog,
            exempt_thread=lambda: thread_of(ref),
        )

    def _untrack(self, team_id: UUID) -> TeamRuntime | None:
        with self._guard:
            self._persistence.pop(team_id, None)
            self._idle.pop(team_id, None)
            return self._runtimes.pop(team_id, None)

    # -- queries ------------------------------------------------------------
    def get_team(self, team_id: UUID) -> Process | None:
        """The team record, or ``None``."""
        return self.event_store.load_team(team_id)

    def get_runtime(self, team_id: UUID) -> TeamRuntime | None:
        """The runtime of a team running in this manager, or ``None``."""
        with self._guard:
            return self._runtimes.get(team_id)

    def get_persistence(self, team_id: UUID) -> PersistenceSubscriber | None:
        """The persistence subscriber of a team running in this manager (to ``flush`` it)."""
        with self._guard:
            return self._persistence.get(team_id)

    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only; see ``EventStore.list_teams``)."""
        return self.event_store.list_teams(user_id=user_id, status=status, metadata=metadata)

    # -- lifecycle ----------------------------------------------------------
    def create_team(
        self,
        team_card: TeamCard,
        user_id: str = "cli",
        user_email: str = "",
        team_id: UUID | None = None,
        *,
        metadata: Any = None,
    ) -> TeamRuntime:
        """Build a team from ``team_card``, record it as running and return its runtime.

        ``metadata`` is validated against ``team_card.metadata_type`` before
        anything is built (``ValueError`` when the card declares none,
        ``pydantic.ValidationError`` when it does not validate).
        """
        value = validate_metadata(team_card, metadata)
        team_id = team_id or uuid4()
        with self._lock(team_id):
            if self.event_store.load_team(team_id) is not None:
                raise TeamStateError(team_id, "exists", f"team {team_id} already exists")
            persistence, idle, subscribers = self._team_subscribers(team_id, 0)
            try:
                runtime = TeamFactory.build(
                    team_card,
                    self.actor_system,
                    subscribers,
                    team_id,
                    user_id=user_id,
                    user_email=user_email,
                    metadata=value,
                )
            except BaseException:
                idle.close()
                persistence.close()
                raise
            self._track(runtime, persistence, idle)
            process = Process(
                team_id=team_id,
                team_card=team_card,
                status=TeamStatus.RUNNING,
                user_id=user_id,
                user_email=user_email,
                metadata=value,
            )
            self.event_store.save_team(process)
            self.service_registry.register_team(self.instance_id, team_id)
            return runtime

    def stop_team(self, team_id: UUID) -> None:
        """Stop a running team and record it as stopped; stopping a stopped team does nothing.

        A team recorded as running that this manager does not run (its process
        died) is simply recorded as stopped, which makes it resumable.
        """
        with self._lock(team_id):
            process = self._require(team_id)
            if process.status == TeamStatus.STOPPED:
                return
            if process.status == TeamStatus.DELETED:
                raise TeamStateError(team_id, process.status, f"team {team_id} is deleted")
            runtime = self.get_runtime(team_id)
            if runtime is not None:
                orch: Orchestrator = self.actor_system.proxy_ask(
                    runtime.orchestrator_addr, Orchestrator, STOP_GRACE
                )
                try:
                    event = orch.stop(STOP_GRACE)
                    if not event.wait(STOP_GRACE + 5.0):
                        logger.warning("team %s did not confirm its stop in time", team_id)
                except Exception:
                    if runtime.orchestrator_addr.is_alive():
                        raise
                    # Already down (stopped through pykka, or idle-stopped concurrently).
                persistence = self.get_persistence(team_id)
                if persistence is not None:
                    persistence.close()
            else:
                logger.warning(
                    "team %s is recorded as running but does not run here: marking it stopped",
                    team_id,
                )
            idle = self._idle.get(team_id)
            if idle is not None:
                idle.close()
            self.event_store.save_team(process.with_status(TeamStatus.STOPPED))
            self.service_registry.deregister_team(self.instance_id, team_id)
            self._untrack(team_id)

    def resume_team(self, team_id: UUID) -> TeamRuntime:
        """Rebuild a stopped team from its log and record it as running again.

        New events continue the stored sequence. Raises ``TeamNotFoundError``
        for an unknown team and ``TeamStateError`` unless the team is stopped.
        """
        with self._lock(team_id):
            process = self._require(team_id)
            if process.status != TeamStatus.STOPPED:
                hint = (
                    " (if the process that ran it is gone, stop it first to mark it stopped)"
                    if process.status == TeamStatus.RUNNING
                    else ""
                )
                raise TeamStateError(
                    team_id,
                    process.status,
                    f"team {team_id} is {process.status}, only a stopped team can be resumed"
                    + hint,
                )
            max_sequence = self.event_store.get_max_sequence(team_id)
            persistence, idle, subscribers = self._team_subscribers(team_id, max_sequence)
            for subscriber in subscribers:
                _set_restoring(subscriber, team_id, True)
            try:
                runtime = TeamRestorer(self.actor_system, self.event_store).restore(
                    process, subscribers
                )
            except BaseException:
                idle.close()
                persistence.close()
                raise
            finally:
                for subscriber in subscribers:
                    _set_restoring(subscriber, team_id, False)
            self._track(runtime, persistence, idle)
            self.event_store.save_team(process.with_status(TeamStatus.RUNNING))
            self.service_registry.register_team(self.instance_id, team_id)
            return runtime

    def delete_team(self, team_id: UUID) -> None:
        """Delete a stopped team: its record, events and states."""
        with self._lock(team_id):
            process = self._require(team_id)
            if process.status != TeamStatus.STOPPED:
                raise TeamStateError(
                    team_id,
                    process.status,
                    f"team {team_id} is {process.status}, only a stopped team can be deleted "
                    "(stop it first)",
                )
            self.event_store.delete_team(team_id)
            self.service_registry.deregister_team(self.instance_id, team_id)
        with self._guard:
            self._locks.pop(team_id, None)

    def update_team_metadata(self, team_id: UUID, metadata: Any) -> Process:
        """Replace a team's metadata (never merged; ``None`` clears) and return the record.

        The value is validated against the ``metadata_type`` of the card the
        team was created with; nothing is written when it fails.
        """
        with self._lock(team_id):
            process = self._require(team_id)
            if process.status == TeamStatus.DELETED:
                raise TeamStateError(team_id, process.status, f"team {team_id} is deleted")
            updated = process.with_metadata(metadata)
            self.event_store.save_team(updated)
            runtime = self.get_runtime(team_id)
            if runtime is not None:
                runtime._orchestrator_tell.set_metadata(updated.metadata)
            return updated

    def stop_all(self) -> None:
        """Stop every team this manager runs (for a clean process exit)."""
        with self._guard:
            team_ids = list(self._runtimes)
        for team_id in team_ids:
            try:
                self.stop_team(team_id)
            except Exception:
                logger.exception("stopping team %s failed", team_id)

    def __repr__(self) -> str:
        return f"TeamManager(instance_id={self.instance_id}, running={len(self._runtimes)})"


def _set_restoring(subscriber: EventSubscriber, team_id: UUID, restoring: bool) -> None:
    method = getattr(subscriber, "set_restoring", None)
    if method is not None:
        method(team_id, restoring)
