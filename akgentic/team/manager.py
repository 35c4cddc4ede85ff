"""TeamManager: the lifecycle of teams, backed by an event store.

::

    create_team()          stop_team()          delete_team()
  ---------------> RUNNING -----------> STOPPED -------------> (gone)
                   ^  |  ^                 |
                   |  |  +- resume_team() -+
     activate()    |  | idle for passivate_after
     (any message) |  v
                  PASSIVATED ---(activation fails)---> BROKEN (resume_team only)

Virtual teams (docs/virtual-teams.md): a team idle for ``passivate_after``
seconds (its card's, else the manager's) is *passivated*: its actors stop,
its events are flushed and its record says ``passivated``. :meth:`TeamManager.activate`
(and everything that goes through it: :meth:`TeamManager.send`, a
``TeamRuntime`` whose team was passivated, the console, A2A, MCP) brings it
back from its log: concurrent callers share one activation, at most
``max_activations`` run at once and the rest queue, and a caller waits at
most ``activation_timeout`` seconds. A team whose activation fails is recorded
``broken`` with the reason and is not tried again until ``resume_team``.

``fork_team(id, seq)`` makes a new STOPPED team of a team's events ``1..seq``
(the team running or not), and ``rewind_team(id, seq)`` one that takes over
the team's name, the team being marked abandoned (:mod:`akgentic.team.fork`).

Each running team gets, in this order, a
:class:`~akgentic.team.subscribers.PersistenceSubscriber` (writes its events),
an :class:`~akgentic.team.subscribers.IdleStopSubscriber` (stops it after
``ORCHESTRATOR_TIMEOUT_DELAY`` idle seconds), the shared subscribers given
to the manager, which are called from many orchestrator threads and must be
thread-safe, and last those the plugins attach to it (hook
``akgentic_team_subscribers``, called once per create, resume or adoption; a
plugin whose hook fails is reported and the team runs without it). Its
runtime gets a :class:`~akgentic.team.backpressure.SendGate`: ``send`` waits
while more than ``max_backlog`` records are queued in front of the store's
writer (the batch it is committing aside). A team that fails to
build leaves nothing behind: its actors are stopped, its idle countdown closed,
and its record and events deleted.

Ownership: the manager runs a team only while it holds the team's claim in the
store (:meth:`EventStore.claim_team`). ``create_team`` inserts the record
already claimed, ``resume_team`` claims it (refused with
:class:`~akgentic.team.errors.TeamOwnedError` while another live process
holds it; granted at once when the holder died), and every write of the team
carries the claim's epoch, so a manager whose claim was taken over cannot
write again: its next write raises
:class:`~akgentic.team.errors.TeamClaimLostError`, the team is stopped
without writing, and ``stop_team`` re-raises that error. ``stop_team`` of a
team another process runs asks that owner to stop (by the signal its owner
record names) and waits, or says why it cannot; it never rewrites the record
of a live owner.

Operations on one team are serialised; operations on different teams run in
parallel. Team ids may be given as ``UUID`` or as their string form.

A manager reads plugins through one :class:`~akgentic.plugins.PluginRegistry`
(``registry=``, default: the process-wide one): cards it loads
(:meth:`TeamManager.load_card`, :meth:`TeamManager.parse_card`), the teams it
builds and the logs it decodes on resume resolve names and former class paths
there, so two managers with different plugin selections live in one process.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar
from uuid import UUID, uuid4

from akgentic.core.actor_refs import thread_of
from akgentic.core.actor_system import ActorSystem
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.mailbox import queued_count
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import actor_ref_of
from akgentic.team.backpressure import DEFAULT_MAX_BACKLOG, SendGate
from akgentic.team.card import TeamCard
from akgentic.team.checkpoint import (
    CHECKPOINT_EVERY,
    Checkpointer,
    CheckpointFold,
    load_restore_point,
    write_checkpoint,
)
from akgentic.team.errors import (
    ActivationTimeoutError,
    EventLogUnreadableError,
    TeamActivationError,
    TeamCardError,
    TeamClaimLostError,
    TeamNotFoundError,
    TeamOwnedError,
    TeamStateError,
)
from akgentic.team.factory import TeamFactory, stop_orchestrator
from akgentic.team.models import Process, TeamOwner, TeamStatus, validate_metadata
from akgentic.team.ownership import TeamId, as_team_id, stop_elsewhere
from akgentic.team.restorer import ConfigTransform, TeamRestorer
from akgentic.team.runtime import TeamRuntime
from akgentic.team.services import NullServiceRegistry, ServiceRegistry
from akgentic.team.store import EventStore
from akgentic.team.subscribers.idle import IdleStopSubscriber, idle_delay
from akgentic.team.subscribers.persistence import PersistenceSubscriber
from akgentic.team.subscribers.writers import WriterPool

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry
    from akgentic.team.fork import ForkResult

__all__ = [
    "DEFAULT_ACTIVATION_TIMEOUT",
    "DEFAULT_MAX_ACTIVATIONS",
    "DEFAULT_PASSIVATE_AFTER",
    "STOP_GRACE",
    "TeamId",
    "TeamManager",
    "as_team_id",
]

logger = logging.getLogger(__name__)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _with_registry(
    method: Callable[Concatenate[TeamManager, _P], _R],
) -> Callable[Concatenate[TeamManager, _P], _R]:
    """Run a manager method with the manager's registry current in this thread."""

    @functools.wraps(method)
    def run(self: TeamManager, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        from akgentic.plugins.registry import use_registry

        with use_registry(self._registry):
            return method(self, *args, **kwargs)

    return run


#: Seconds a team is given to stop before its orchestrator forces the end.
STOP_GRACE = 30.0
#: Seconds ``stop_team`` waits for another process to give up a team it asked to stop.
REMOTE_STOP_WAIT = STOP_GRACE + 15.0

#: Idle seconds after which a team is passivated, unless its card or the manager says otherwise.
DEFAULT_PASSIVATE_AFTER = 300.0
#: Activations a manager runs at once; more wait in its queue.
DEFAULT_MAX_ACTIVATIONS = 8
#: Longest a caller waits for a team's activation before ``ActivationTimeoutError``.
DEFAULT_ACTIVATION_TIMEOUT = 30.0

ClaimLostHandler = Callable[[UUID, TeamClaimLostError], None]
#: Called with a team's id when its passivation countdown runs out (see ``on_idle``).
IdleHandler = Callable[[UUID], None]


class _IdleRouter:
    """What a team's idle countdown calls when the manager hands idle teams to ``on_idle``."""

    __slots__ = ("manager", "on_idle")

    def __init__(self, manager: TeamManager, on_idle: IdleHandler) -> None:
        self.manager = manager
        self.on_idle = on_idle

    def stop_team(self, team_id: UUID) -> None:
        self.manager.stop_team(team_id)

    def passivate_team(self, team_id: UUID, *, when_idle: bool = False) -> None:
        self.on_idle(team_id)


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
        stop_signal: int | None = None,
        on_claim_lost: ClaimLostHandler | None = None,
        registry: PluginRegistry | None = None,
        max_backlog: int = DEFAULT_MAX_BACKLOG,
        checkpoint_every: int = CHECKPOINT_EVERY,
        passivate_after: float | None = DEFAULT_PASSIVATE_AFTER,
        max_activations: int = DEFAULT_MAX_ACTIVATIONS,
        activation_timeout: float = DEFAULT_ACTIVATION_TIMEOUT,
        on_idle: IdleHandler | None = None,
    ) -> None:
        """Set up the manager; it claims teams as :attr:`owner`.

        ``passivate_after`` (seconds, None: never) is the idle time after which a
        team is passivated when its card does not say; it applies when it is
        shorter than the idle-stop delay. ``max_activations`` and
        ``activation_timeout`` bound :meth:`activate`. ``on_idle``, when given, is
        called (on the countdown's own thread) instead of passivating a team whose
        countdown ran out: for a placement layer that must let the team go first
        (a fleet worker stops routing to it), then calls
        ``passivate_team(team_id, when_idle=True)`` itself, or :meth:`rearm_idle`.

        ``stop_signal`` is the signal on which this process stops its teams
        cleanly; it is recorded in the owner, so ``stop_team`` in another
        process can ask. ``on_claim_lost`` is called (from a store writer
        thread) when another owner took one of this manager's teams over.
        ``checkpoint_every``: events between two checkpoints of a team's log
        (``0``: only when :meth:`checkpoint_team` asks; see :mod:`akgentic.team.checkpoint`).
        """
        self._registry = registry
        self.actor_system = actor_system
        self.event_store = event_store
        self.service_registry: ServiceRegistry = service_registry or NullServiceRegistry()
        self.subscribers: list[EventSubscriber] = list(subscribers or ())
        self.instance_id = instance_id or uuid4()
        self.idle_delay = idle_delay
        self.owner = TeamOwner.current(self.instance_id, stop_signal)
        self.on_claim_lost = on_claim_lost
        self.on_idle = on_idle
        self._epochs: dict[UUID, int] = {}
        self._lost: dict[UUID, TeamClaimLostError] = {}
        self.max_backlog = max_backlog
        if checkpoint_every < 0:
            raise ValueError(f"checkpoint_every must be >= 0, not {checkpoint_every}")
        self.checkpoint_every = checkpoint_every
        if passivate_after is not None and passivate_after <= 0:
            raise ValueError(f"passivate_after must be > 0 seconds or None, not {passivate_after}")
        if activation_timeout <= 0:
            raise ValueError(f"activation_timeout must be > 0 seconds, not {activation_timeout}")
        self.passivate_after = passivate_after
        self.activation_timeout = activation_timeout
        self._activation_pool = WriterPool(max_activations, name="akgentic-activation")
        self._activations: dict[UUID, Future[TeamRuntime]] = {}
        self._runtimes: dict[UUID, TeamRuntime] = {}
        self._persistence: dict[UUID, PersistenceSubscriber] = {}
        self._idle: dict[UUID, IdleStopSubscriber] = {}
        self._locks: dict[UUID, threading.RLock] = {}
        self._guard = threading.Lock()
        self.service_registry.register_instance(self.instance_id)

    @property
    def registry(self) -> PluginRegistry:
        """The plugin registry this manager resolves names with (given, else the current one)."""
        if self._registry is not None:
            return self._registry
        from akgentic.plugins import current_registry

        return current_registry()

    # -- cards --------------------------------------------------------------
    @_with_registry
    def load_card(self, path: str | Path) -> TeamCard:
        """Read and validate a team card file, resolving names with this manager's registry.

        Raises ``TeamCardValidationError`` (every problem, with its location).
        """
        from akgentic.team.card_yaml import load_team_card

        return load_team_card(path)

    @_with_registry
    def parse_card(self, card: str | Mapping[str, Any], source: str = "<string>") -> TeamCard:
        """Validate a team card given as YAML text or as data, with this manager's registry."""
        from akgentic.team.card_yaml import parse_team_card

        if isinstance(card, str):
            return parse_team_card(card, source)
        return TeamCard.model_validate(dict(card))

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
        self,
        team_id: UUID,
        initial_sequence: int,
        epoch: int,
        card: TeamCard,
        fold: CheckpointFold | None = None,
    ) -> tuple[PersistenceSubscriber, IdleStopSubscriber, list[EventSubscriber]]:
        persistence = PersistenceSubscriber(
            team_id,
            self.event_store,
            initial_sequence,
            epoch=epoch,
            on_failure=self._write_failed,
        )
        persistence.checkpointer = Checkpointer(team_id, fold, self.checkpoint_every)
        idle = self._idle_countdown(team_id, card)
        return persistence, idle, [persistence, idle, *self.subscribers]

    def _idle_countdown(self, team_id: UUID, card: TeamCard) -> IdleStopSubscriber:
        """The team's idle countdown: passivation when it comes first, else the idle stop."""
        stop_after = idle_delay() if self.idle_delay is None else float(self.idle_delay)
        passivate_after = card.passivate_after
        if passivate_after is None:
            passivate_after = self.passivate_after
        if passivate_after is not None and passivate_after <= stop_after:
            target = self if self.on_idle is None else _IdleRouter(self, self.on_idle)
            return IdleStopSubscriber(target, team_id, passivate_after, passivate=True)
        return IdleStopSubscriber(self, team_id, stop_after)

    def _plugin_subscribers(
        self, team_card: TeamCard, team_id: UUID, *, creating: bool
    ) -> list[EventSubscriber]:
        """What the plugins attach to one team run (hook ``akgentic_team_subscribers``).

        A plugin refusing the card (``TeamCardError``) fails a creation; a resume
        goes on without that plugin's subscribers, since the card is already stored.
        """
        return self.registry.team_subscribers(
            team_card, team_id, refusal=(TeamCardError,), raise_refusal=creating
        )

    def _write_failed(self, team_id: UUID, error: BaseException) -> None:
        """A team's persistence stopped: when its claim was lost, stop it without writing."""
        if not isinstance(error, TeamClaimLostError):
            return
        with self._guard:
            if team_id in self._lost:
                return
            self._lost[team_id] = error
            runtime = self._runtimes.get(team_id)
        logger.error("%s", error)
        if runtime is not None:
            threading.Thread(
                target=stop_orchestrator,
                args=(self.actor_system, runtime.orchestrator_addr, 5.0),
                name=f"akgentic-claim-lost-{team_id}",
                daemon=True,
            ).start()
        if self.on_claim_lost is not None:
            self.on_claim_lost(team_id, error)

    def claim_lost(self, team_id: TeamId) -> TeamClaimLostError | None:
        """The error that ended this manager's claim on a team, if it was taken over."""
        with self._guard:
            return self._lost.get(as_team_id(team_id))

    def _discard(self, team_id: UUID, persistence: PersistenceSubscriber) -> None:
        """Undo a team whose creation failed: its record, events and claim."""
        try:
            persistence.close()
        except Exception as exc:
            logger.debug("discarding team %s: %s", team_id, exc)
        try:
            self.event_store.delete_team(team_id)
        finally:
            self.event_store.release_team(team_id)

    def _track(
        self,
        runtime: TeamRuntime,
        persistence: PersistenceSubscriber,
        idle: IdleStopSubscriber,
    ) -> None:
        runtime.attach_gate(self._gate(runtime, persistence))
        runtime.attach_activator(functools.partial(self.activate, runtime.id))
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
            self._epochs.pop(team_id, None)
            return self._runtimes.pop(team_id, None)

    # -- queries ------------------------------------------------------------
    @_with_registry
    def get_team(self, team_id: TeamId) -> Process | None:
        """The team record, or ``None``."""
        return self.event_store.load_team(as_team_id(team_id))

    def get_runtime(self, team_id: TeamId) -> TeamRuntime | None:
        """The runtime of a team running in this manager, or ``None``."""
        with self._guard:
            return self._runtimes.get(as_team_id(team_id))

    def get_persistence(self, team_id: TeamId) -> PersistenceSubscriber | None:
        """The persistence subscriber of a team running in this manager (to ``flush`` it)."""
        with self._guard:
            return self._persistence.get(as_team_id(team_id))

    @_with_registry
    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only; see ``EventStore.list_teams``)."""
        return self.event_store.list_teams(user_id=user_id, status=status, metadata=metadata)

    # -- lifecycle ----------------------------------------------------------
    @_with_registry
    def create_team(
        self,
        team_card: TeamCard,
        user_id: str = "cli",
        user_email: str = "",
        team_id: TeamId | None = None,
        *,
        metadata: Any = None,
    ) -> TeamRuntime:
        """Build a team from ``team_card``, record it as running and return its runtime.

        ``metadata`` is validated against ``team_card.metadata_type`` before
        anything is built (``ValueError`` when the card declares none,
        ``pydantic.ValidationError`` when it does not validate). Creation is
        all or nothing: the record is inserted already claimed by this
        manager, and when building fails the record and every event written
        meanwhile are deleted again.
        """
        value = validate_metadata(team_card, metadata)
        uid = uuid4() if team_id is None else as_team_id(team_id)
        with self._lock(uid):
            record = Process(
                team_id=uid,
                team_card=team_card,
                status=TeamStatus.RUNNING,
                user_id=user_id,
                user_email=user_email,
                metadata=value,
            )
            claimed = self.event_store.claim_team(uid, self.owner, create=record)
            persistence, idle, subscribers = self._team_subscribers(
                uid, 0, claimed.epoch, team_card
            )
            try:
                # A plugin refusing the card (TeamCardError) ends the creation here,
                # before anything runs; the record is then discarded below.
                subscribers += self._plugin_subscribers(team_card, uid, creating=True)
                runtime = TeamFactory.build(
                    team_card,
                    self.actor_system,
                    subscribers,
                    uid,
                    user_id=user_id,
                    user_email=user_email,
                    metadata=value,
                    registry=self._registry,
                )
            except BaseException:
                idle.close()
                self._discard(uid, persistence)
                raise
            self._track(runtime, persistence, idle)
            with self._guard:
                self._epochs[uid] = claimed.epoch
            self.service_registry.register_team(self.instance_id, uid)
            return runtime

    @_with_registry
    def stop_team(self, team_id: TeamId, *, here_only: bool = False) -> None:
        """Stop a running team and record it as stopped; stopping a stopped team does nothing.

        ``here_only=True`` stops the team only if this manager runs it, and does
        nothing otherwise: for a session ending that must not reach a copy another
        process started after this one let the team go (an idle stop, say).

        A team this manager runs is stopped here. A team another live process
        owns is asked to stop through the signal its owner record names, and
        this call waits until that owner let it go (``TeamOwnedError`` when it
        cannot be asked, or did not stop in time). A team recorded as running
        whose owner is gone (its process died) is claimed and recorded as
        stopped, which makes it resumable. Raises ``TeamClaimLostError`` when
        this manager's claim was taken over meanwhile (nothing is written).
        """
        uid = as_team_id(team_id)
        with self._lock(uid):
            if here_only and self.get_runtime(uid) is None:
                return
            process = self._require(uid)
            runtime = self.get_runtime(uid)
            if runtime is None:
                if process.status == TeamStatus.STOPPED:
                    return
                if process.status == TeamStatus.DELETED:
                    raise TeamStateError(uid, process.status, f"team {uid} is deleted")
                if process.status in (TeamStatus.PASSIVATED, TeamStatus.BROKEN):
                    self._record_stopped(uid)
                    return
                self._stop_elsewhere(process)
                return
            self._stop_here(uid, runtime)

    def _record_stopped(self, team_id: UUID) -> None:
        """A passivated or broken team (no actors anywhere) becomes stopped, under a claim."""
        claimed = self.event_store.claim_team(team_id, self.owner)
        try:
            self.event_store.save_team(claimed.with_status(TeamStatus.STOPPED), epoch=claimed.epoch)
        finally:
            self.event_store.release_team(team_id)

    @_with_registry
    def passivate_team(self, team_id: TeamId, *, when_idle: bool = False) -> bool:
        """Stop a team this manager runs and record it ``passivated`` (woken by a message).

        Everything its persistence queued is written before the record changes,
        as for :meth:`stop_team`; a team this manager does not run is left alone.
        ``when_idle=True`` (the idle countdown's call) leaves a team that got work
        since the countdown ran out running, and counts down again. Returns
        whether the team was passivated by this call.
        """
        uid = as_team_id(team_id)
        with self._lock(uid):
            runtime = self.get_runtime(uid)
            if runtime is None:
                return False
            # New sends now wait for the next activation (they block on this lock);
            # work that came in since the countdown fired keeps the team running.
            runtime.mark_closing(True)
            if when_idle and self._busy(runtime):
                runtime.mark_closing(False)
                self.rearm_idle(uid)
                return False
            persistence = self.get_persistence(uid)
            if persistence is not None:
                try:  # the next activation starts from here (akgentic.team.checkpoint)
                    persistence.write_checkpoint()
                except Exception as exc:
                    logger.warning("team %s: no checkpoint at passivation: %s", uid, exc)
            self._stop_here(uid, runtime, TeamStatus.PASSIVATED)
            return True

    def rearm_idle(self, team_id: TeamId) -> None:
        """Count a running team's idle time down again (its countdown fired, the team stays)."""
        idle = self._idle.get(as_team_id(team_id))
        if idle is not None:
            idle.rearm()

    def _busy(self, runtime: TeamRuntime) -> bool:
        """Work since the countdown ran out: in flight, done (re-armed) or queued."""
        idle = self._idle.get(runtime.id)
        if idle is not None and (idle.timer.active_tasks > 0 or idle.timer.is_running):
            return True
        inboxes = (runtime.entry_addr, runtime.orchestrator_addr)
        return any(queued_count(actor_ref_of(addr).actor_inbox) for addr in inboxes)

    def _stop_here(
        self, team_id: UUID, runtime: TeamRuntime, status: TeamStatus = TeamStatus.STOPPED
    ) -> None:
        failure: BaseException | None = None
        try:
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
                # Already down (stopped through pykka, idle-stopped or claim lost concurrently).
            persistence = self.get_persistence(team_id)
            if persistence is not None:
                try:
                    persistence.close()
                except Exception as exc:
                    failure = exc
            lost = self.claim_lost(team_id)
            if lost is not None:
                failure = lost
            else:
                with self._guard:
                    epoch = self._epochs.get(team_id)
                process = self._require(team_id)
                self.event_store.save_team(process.with_status(status), epoch=epoch)
        finally:
            idle = self._idle.get(team_id)
            if idle is not None:
                idle.close()
            self.event_store.release_team(team_id)
            self.service_registry.deregister_team(self.instance_id, team_id)
            self._untrack(team_id)
        if failure is not None:
            raise failure

    def _stop_elsewhere(self, process: Process) -> None:
        """Stop a team this manager does not run: ask its live owner, or fence out a dead one."""
        stop_elsewhere(self.event_store, self.owner, process, REMOTE_STOP_WAIT)

    @_with_registry
    def resume_team(
        self, team_id: TeamId, *, configure: ConfigTransform | None = None
    ) -> TeamRuntime:
        """Rebuild a team from its log, claim it and record it as running again.

        ``configure`` rewrites each restored agent's config (and each hireable
        profile's) before it starts, for this run only (see :mod:`akgentic.team.restorer`).

        A stopped team resumes; so does one recorded as running whose owner
        died (crash recovery, at once). New events continue the stored
        sequence. Raises ``TeamNotFoundError`` for an unknown team,
        ``TeamOwnedError`` while a live process runs it, ``TeamStateError``
        when this manager runs it already or it is deleted, and
        ``EventLogUnreadableError`` when its log holds nothing to rebuild from.
        """
        uid = as_team_id(team_id)
        with self._lock(uid):
            process = self._require(uid)
            if self.get_runtime(uid) is not None:
                raise TeamStateError(
                    uid,
                    process.status,
                    f"team {uid} is running in this manager; only a stopped team can be resumed",
                )
            if process.status == TeamStatus.DELETED:
                raise TeamStateError(uid, process.status, f"team {uid} is deleted")
            self._refuse_empty_log(uid, process)  # before the claim, so nothing is written
            claimed = self.event_store.claim_team(uid, self.owner)
            try:
                runtime = self._restore(claimed, configure)
            except BaseException:
                self.event_store.release_team(uid)
                raise
            self.service_registry.register_team(self.instance_id, uid)
            return runtime

    @_with_registry
    def adopt(self, team_id: TeamId, *, activation: bool = False) -> TeamRuntime:
        """Take a team over for a runtime that placed it here, then resume it from its log.

        For fleets (``akgentic.cluster``), where the placement layer holds the
        lease: the claim is a compare-and-set on the epoch just read
        (``take_over_team`` when the store offers it, which succeeds even
        while a previous owner that lost its lease still holds a session;
        otherwise ``claim_team``). The previous owner's next write is refused
        by the store, so it cannot act again. Raises like :meth:`resume_team`,
        and ``TeamClaimLostError`` when another claim came first.

        A passivated or broken team that cannot be rebuilt is recorded
        ``broken`` with the reason, as :meth:`activate` does
        (``TeamActivationError``). ``activation=True`` (a message woke the
        team, not an explicit resume) refuses a broken team at once, from its
        record, without claiming it.
        """
        uid = as_team_id(team_id)
        with self._lock(uid):
            process = self._require(uid)
            if self.get_runtime(uid) is not None:
                raise TeamStateError(uid, process.status, f"team {uid} runs in this manager")
            if process.status == TeamStatus.DELETED:
                raise TeamStateError(uid, process.status, f"team {uid} is deleted")
            if activation and process.status == TeamStatus.BROKEN:
                raise TeamActivationError(uid, process.reason or "an earlier activation failed")
            waking = process.status in (TeamStatus.PASSIVATED, TeamStatus.BROKEN)
            if not waking:
                self._resumable_log(uid)  # a waking team's bad log is recorded (below)
            take_over = getattr(self.event_store, "take_over_team", None)
            if take_over is None:
                claimed = self.event_store.claim_team(uid, self.owner)
            else:
                claimed = take_over(uid, self.owner, epoch=process.epoch)
            try:
                runtime = self._restore(claimed)
            except (TeamOwnedError, TeamClaimLostError):
                self.event_store.release_team(uid)
                raise
            except BaseException as exc:
                if not waking:
                    self.event_store.release_team(uid)
                    raise
                reason = f"{type(exc).__name__}: {exc}"
                self._record_broken(claimed, reason)
                raise TeamActivationError(uid, reason) from exc
            self.service_registry.register_team(self.instance_id, uid)
            return runtime

    def abandon(self, team_id: TeamId) -> None:
        """Drop a team from this manager without recording anything about it.

        For an owner that learnt its placement is gone (its lease lapsed, or
        another owner claimed the team): the actors are stopped and the claim
        released; the team record is not written (a new owner holds it, or
        will). Writes still queued are made only while the epoch holds.
        """
        uid = as_team_id(team_id)
        with self._lock(uid):
            runtime = self.get_runtime(uid)
            if runtime is None:
                return
            try:
                stop_orchestrator(self.actor_system, runtime.orchestrator_addr, 5.0)
            except Exception as exc:
                logger.debug("abandoning team %s: %s", uid, exc)
            persistence = self.get_persistence(uid)
            if persistence is not None:
                try:
                    persistence.close(10.0)
                except Exception as exc:
                    logger.debug("abandoning team %s: %s", uid, exc)
            idle = self._idle.get(uid)
            if idle is not None:
                idle.close()
            self.event_store.release_team(uid)
            self.service_registry.deregister_team(self.instance_id, uid)
            self._untrack(uid)

    def epoch_of(self, team_id: TeamId) -> int | None:
        """The epoch of this manager's claim on a team it runs (``None`` otherwise)."""
        with self._guard:
            return self._epochs.get(as_team_id(team_id))

    def _refuse_empty_log(self, team_id: UUID, process: Process) -> None:
        """Refuse a resume with nothing to rebuild from; a live owner's team is owned first.

        A running team's log fills asynchronously (the orchestrator reports, the
        writer thread commits), so it may still be empty right after
        ``create_team``: while a live owner holds the claim, the answer is
        ``TeamOwnedError`` (what the claim would raise), not an empty log.
        """
        if self.event_store.get_max_sequence(team_id) > 0:
            return
        if self.event_store.claim_held(team_id):
            owner = process.owner.describe() if process.owner is not None else None
            raise TeamOwnedError(team_id, owner)
        self._resumable_log(team_id)

    def _resumable_log(self, team_id: UUID) -> int:
        """The log's highest sequence; an empty log has nothing to resume from."""
        max_sequence = self.event_store.get_max_sequence(team_id)
        if max_sequence == 0:
            raise EventLogUnreadableError(
                f"team {team_id} has an empty event log, so there is nothing to resume it "
                f"from; delete it (`akgentic team delete {team_id}` once stopped) and create "
                "it again"
            )
        return max_sequence

    def _restore(self, claimed: Process, configure: ConfigTransform | None = None) -> TeamRuntime:
        uid = claimed.team_id
        max_sequence = self._resumable_log(uid)
        if claimed.status == TeamStatus.RUNNING:
            logger.warning("team %s was recorded as running by an owner that is gone", uid)
        # Before the team's own subscribers exist, so nothing is left open if this raises.
        attached = self._plugin_subscribers(claimed.team_card, uid, creating=False)
        point = load_restore_point(self.event_store, uid)
        persistence, idle, subscribers = self._team_subscribers(
            uid, max_sequence, claimed.epoch, claimed.team_card, point.fold
        )
        subscribers += attached
        for subscriber in subscribers:
            _set_restoring(subscriber, uid, True)
        try:
            runtime = TeamRestorer(self.actor_system, self.event_store, self._registry).restore(
                claimed, subscribers, configure, point
            )
        except BaseException:
            idle.close()
            persistence.close()
            raise
        finally:
            for subscriber in subscribers:
                _set_restoring(subscriber, uid, False)
        self._track(runtime, persistence, idle)
        with self._guard:
            self._epochs[uid] = claimed.epoch
        if persistence.checkpointer is not None and persistence.checkpointer.due:
            persistence.write_checkpoint()  # a long tail: the next resume starts from here
        try:
            self.event_store.save_team(claimed.with_status(TeamStatus.RUNNING), epoch=claimed.epoch)
        except BaseException:
            stop_orchestrator(self.actor_system, runtime.orchestrator_addr, grace=5.0)
            idle.close()
            self._untrack(uid)
            raise
        return runtime

    # -- activation on demand -------------------------------------------------
    def activate(self, team_id: TeamId, timeout: float | None = None) -> TeamRuntime:
        """The runtime of a team, brought back from its log first when it is passivated.

        The one entry point of every message addressed to a team by id
        (:meth:`send`, a passivated ``TeamRuntime``, the console, A2A, MCP).
        Concurrent callers share one activation; at most ``max_activations``
        run at once and the others queue. Raises ``ActivationTimeoutError`` after
        ``timeout`` seconds (default ``activation_timeout``; the activation goes
        on, and a later call gets its result), ``TeamActivationError`` when the
        team is broken (this activation failed, or an earlier one did),
        ``TeamStateError`` for a stopped team (it wants an explicit
        :meth:`resume_team`) or a deleted one, ``TeamOwnedError`` while another
        live process runs it and ``TeamNotFoundError`` for an unknown id.
        """
        uid = as_team_id(team_id)
        with self._guard:
            runtime = self._runtimes.get(uid)
            if runtime is not None and not runtime.closing:
                return runtime
            future = self._activations.get(uid)
            lead = future is None
            if future is None:
                future = self._activations[uid] = Future()
        if lead:
            self._activation_pool.submit(functools.partial(self._run_activation, uid, future))
        wait = self.activation_timeout if timeout is None else timeout
        try:
            return future.result(wait)
        except FutureTimeout:
            raise ActivationTimeoutError(uid, wait, queued=not future.running()) from None

    def live_runtime(self, team_id: TeamId) -> TeamRuntime | None:
        """The runtime of a team running here; a passivated team is activated first.

        ``None`` for a team that runs nowhere here and is not passivated (stopped,
        running in another process): the caller decides (a resume, a refusal).
        Raises what :meth:`activate` raises for a passivated team that cannot come
        back (``TeamActivationError`` and ``ActivationTimeoutError``).
        """
        uid = as_team_id(team_id)
        runtime = self.get_runtime(uid)
        if runtime is not None:
            return runtime
        process = self.event_store.load_team(uid)
        if process is None or process.status not in (TeamStatus.PASSIVATED, TeamStatus.BROKEN):
            return None
        return self.activate(uid)

    def send(self, team_id: TeamId, content: Any) -> TeamRuntime:
        """``TeamRuntime.send`` to a team by id, activating it first if it is passivated."""
        runtime = self.activate(team_id)
        runtime.send(content)
        return runtime

    def _run_activation(self, team_id: UUID, future: Future[TeamRuntime]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            runtime = self._activate_now(team_id)
        except BaseException as exc:
            with self._guard:
                self._activations.pop(team_id, None)
            future.set_exception(exc)
            return
        with self._guard:
            self._activations.pop(team_id, None)
        future.set_result(runtime)

    @_with_registry
    def _activate_now(self, uid: UUID) -> TeamRuntime:
        with self._lock(uid):
            runtime = self.get_runtime(uid)
            if runtime is not None:
                return runtime
            process = self._require(uid)
            status = process.status
            if status == TeamStatus.BROKEN:
                raise TeamActivationError(uid, process.reason or "an earlier activation failed")
            if status == TeamStatus.STOPPED:
                raise TeamStateError(
                    uid,
                    status,
                    f"team {uid} is stopped, which wants an explicit resume "
                    f"(`akgentic team resume {uid}`); only a passivated team wakes on a message",
                )
            if status == TeamStatus.DELETED:
                raise TeamStateError(uid, status, f"team {uid} is deleted")
            if status == TeamStatus.RUNNING and self.event_store.claim_held(uid):
                owner = process.owner.describe() if process.owner is not None else None
                raise TeamOwnedError(uid, owner)
            # Passivated, or recorded running by an owner that died: bring it back here.
            claimed = self.event_store.claim_team(uid, self.owner)
            try:
                runtime = self._restore(claimed)
            except (TeamOwnedError, TeamClaimLostError):
                self.event_store.release_team(uid)
                raise
            except BaseException as exc:
                reason = f"{type(exc).__name__}: {exc}"
                self._record_broken(claimed, reason)
                raise TeamActivationError(uid, reason) from exc
            self.service_registry.register_team(self.instance_id, uid)
            return runtime

    def _record_broken(self, claimed: Process, reason: str) -> None:
        try:
            broken = claimed.with_status(TeamStatus.BROKEN).model_copy(update={"reason": reason})
            self.event_store.save_team(broken, epoch=claimed.epoch)
        except Exception:
            logger.exception("team %s: recording it broken failed", claimed.team_id)
        finally:
            self.event_store.release_team(claimed.team_id)
        logger.error(
            "team %s could not be activated and is now broken: %s", claimed.team_id, reason
        )

    @_with_registry
    def checkpoint_team(self, team_id: TeamId) -> int | None:
        """Write a checkpoint of a team's log now and return its sequence.

        A team running here gets it in its event stream (acknowledged with the
        events before it: ``get_persistence(id).flush()``); a stopped team is
        claimed while it is written (:func:`akgentic.team.checkpoint.write_checkpoint`).
        ``None`` when the log already ends with a checkpoint. Raises
        ``TeamOwnedError`` for a team another process runs.
        """
        uid = as_team_id(team_id)
        with self._lock(uid):
            persistence = self.get_persistence(uid)
            if persistence is not None:
                return persistence.write_checkpoint()
            self._require(uid)
            claimed = self.event_store.claim_team(uid, self.owner)
            try:
                return write_checkpoint(self.event_store, uid, epoch=claimed.epoch)
            finally:
                self.event_store.release_team(uid)

    @_with_registry
    def delete_team(self, team_id: TeamId) -> None:
        """Delete a stopped team: its record, events and states (claimed while deleting)."""
        uid = as_team_id(team_id)
        with self._lock(uid):
            process = self._require(uid)
            if process.status not in _AT_REST:
                raise TeamStateError(
                    uid,
                    process.status,
                    f"team {uid} is {process.status}, only a stopped team can be deleted "
                    "(or a passivated or broken one; stop it first)",
                )
            self.event_store.claim_team(uid, self.owner)
            try:
                self.event_store.delete_team(uid)
            finally:
                self.event_store.release_team(uid)
            self.service_registry.deregister_team(self.instance_id, uid)
        with self._guard:
            self._locks.pop(uid, None)

    @_with_registry
    def fork_team(
        self,
        team_id: TeamId,
        at_seq: int,
        name: str | None = None,
        *,
        steps: Callable[[str], None] | None = None,
    ) -> ForkResult:
        """A new team from the events ``1..at_seq`` of ``team_id``; returns what was made.

        The fork is recorded stopped (resume it to run it) with its parent and fork
        point in its :class:`~akgentic.team.metadata.Lineage`; ``name`` is its own
        name (default: the parent's). The parent is only read, running or not:
        only what its store acknowledged, never holding its writers. Raises
        ``TeamNotFoundError``, ``TeamStateError``, ``ForkPointError`` (``at_seq``
        out of range), ``EventLogUnreadableError`` (a gap) or ``ForkRefusedError`` (a
        card's state cannot be forked); then nothing is created. See
        :mod:`akgentic.team.fork`.
        """
        from akgentic.team.fork import fork_team

        return fork_team(
            self.event_store,
            as_team_id(team_id),
            at_seq,
            name=name,
            registry=self.registry,
            steps=steps or _no_step,
        )

    @_with_registry
    def rewind_team(
        self,
        team_id: TeamId,
        to_seq: int,
        *,
        steps: Callable[[str], None] | None = None,
    ) -> ForkResult:
        """Fork ``team_id`` at ``to_seq`` under its name and mark ``team_id`` abandoned.

        Nothing is deleted: the abandoned team keeps its events (readable, and it
        can still be resumed). The team must not be running (``TeamOwnedError``,
        ``TeamStateError`` when this manager runs it).
        """
        from akgentic.team.fork import rewind_team

        uid = as_team_id(team_id)
        with self._lock(uid):
            if self.get_runtime(uid) is not None:
                raise TeamStateError(
                    uid, TeamStatus.RUNNING, f"team {uid} is running here; stop it before rewinding"
                )
            return rewind_team(
                self.event_store,
                uid,
                to_seq,
                owner=self.owner,
                registry=self.registry,
                steps=steps or _no_step,
            )

    @_with_registry
    def update_team_metadata(self, team_id: TeamId, metadata: Any) -> Process:
        """Replace a team's metadata (never merged; ``None`` clears) and return the record.

        The value is validated against the ``metadata_type`` of the card the
        team was created with; nothing is written when it fails.
        """
        team_id = as_team_id(team_id)
        with self._lock(team_id):
            process = self._require(team_id)
            if process.status == TeamStatus.DELETED:
                raise TeamStateError(team_id, process.status, f"team {team_id} is deleted")
            updated = process.with_metadata(metadata)
            # Fenced by the epoch just read: a claim made meanwhile wins and this write fails.
            with self._guard:
                epoch = self._epochs.get(team_id, process.epoch)
            self.event_store.save_team(updated, epoch=epoch)
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
            except TeamClaimLostError as exc:
                logger.warning("%s", exc)
            except Exception:
                logger.exception("stopping team %s failed", team_id)

    def __repr__(self) -> str:
        return f"TeamManager(instance_id={self.instance_id}, running={len(self._runtimes)})"


def _no_step(_name: str) -> None:
    return None


#: Statuses of a team no process runs (deletable; a stop just records ``stopped``).
_AT_REST = (TeamStatus.STOPPED, TeamStatus.PASSIVATED, TeamStatus.BROKEN)


def _set_restoring(subscriber: EventSubscriber, team_id: UUID, restoring: bool) -> None:
    method = getattr(subscriber, "set_restoring", None)
    if method is not None:
        method(team_id, restoring)
