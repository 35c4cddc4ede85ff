"""TeamRestorer: rebuild a stopped (or crashed) team from its event log.

Three phases, in this order:

1. **Load** the log (ascending sequence) and the agents' state snapshots: from
   the newest usable checkpoint, its kept events and the log after it
   (:mod:`akgentic.team.checkpoint`), so the time does not grow with the log.
2. **Rebuild** the roster that was alive: every ``StartMessage`` whose sender
   has no later ``StopMessage``. Tool actors (role ``ToolActor``) come first,
   so an agent whose tools look up ``#Name`` singletons on start finds the
   restored actor instead of creating an empty one. The orchestrator is
   recreated with its original id and config, then every agent with its
   original id, class and config, under its original parent (the orchestrator
   when that parent is not alive). The team budget (when the card has one) is
   rebuilt from the log's budget events before any agent starts. Each agent then
   gets its state snapshot (``init_state``) and its own ``EventMessage`` history
   (``init_llm_context``);
   the role catalog is registered again; the subscribers are attached last.
3. **Replay** the log into the orchestrator (``restore_message``), with the
   snapshot addresses of live agents replaced by their new live addresses.

The caller (:class:`~akgentic.team.manager.TeamManager`) puts the subscribers
in restoring mode around this, so the replay is not written a second time.
The card on the team record only supplies team-level wiring (entry point,
supervisors, profiles); who is alive comes from the log, so agents hired at
run time come back and fired members do not.

``configure`` (optional) rewrites each agent's config before its actor starts,
and each hireable profile's: how a resumed team is run on another model
(``akgentic team resume --model``). It is not written to the log, so the next
resume without it runs on the recorded configs again.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.actor_refs import ask_call
from akgentic.core.actor_system import ActorSystem
from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage, StartMessage, StopMessage
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import ProxyWrapper
from akgentic.core.utils.addresses import map_addresses
from akgentic.core.utils.serializer import class_path, import_class
from akgentic.team.checkpoint import RestorePoint, load_restore_point, restore_messages
from akgentic.team.factory import hireable_catalog, stop_orchestrator
from akgentic.team.models import AgentStateSnapshot, Process
from akgentic.team.runtime import TeamRuntime
from akgentic.team.store import EventStore
from akgentic.team.subscribers.activity import ActivityMonitor

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry

__all__ = ["TOOL_ACTOR_ROLE", "ConfigTransform", "TeamRestorer", "live_starts"]

#: Rewrites an agent's config (a fresh copy, its own to change) before the agent starts.
ConfigTransform = Callable[[BaseConfig], BaseConfig]

logger = logging.getLogger(__name__)

TOOL_ACTOR_ROLE = "ToolActor"
_ORCHESTRATOR_TYPE = class_path(Orchestrator)
_ASK_TIMEOUT = 30.0


def live_starts(events: Sequence[Message]) -> list[StartMessage]:
    """The ``StartMessage`` of every actor that never stopped, in log order."""
    stopped: set[UUID] = set()
    for message in events:
        if isinstance(message, StopMessage) and message.sender is not None:
            stopped.add(message.sender.agent_id)
    starts: dict[UUID, StartMessage] = {}
    for message in events:
        if isinstance(message, StartMessage) and message.sender is not None:
            agent_id = message.sender.agent_id
            if agent_id not in stopped and agent_id not in starts:
                starts[agent_id] = message
    return list(starts.values())


def _actor_type(address: ActorAddress) -> str:
    return address.actor_type if isinstance(address, ActorAddressProxy) else ""


class TeamRestorer:
    """Rebuilds a team from ``event_store`` onto ``actor_system``.

    ``registry`` answers the names and former class paths met while decoding and
    rebuilding (default: :func:`akgentic.plugins.current_registry`).
    """

    def __init__(
        self,
        actor_system: ActorSystem,
        event_store: EventStore,
        registry: PluginRegistry | None = None,
    ) -> None:
        self.actor_system = actor_system
        self.event_store = event_store
        self.registry = registry

    def restore(
        self,
        process: Process,
        subscribers: Sequence[EventSubscriber] | None = None,
        configure: ConfigTransform | None = None,
        point: RestorePoint | None = None,
    ) -> TeamRuntime:
        """Rebuild the team of ``process`` and return its runtime (see the module docstring).

        ``point`` is what to replay, when the caller loaded it already
        (:func:`~akgentic.team.checkpoint.load_restore_point`).
        """
        # Decoding a log allocates many objects and frees none: with the cyclic
        # collector on, each young-generation pass re-walks the growing set of
        # survivors, which makes a restore grow faster than its log. Collection
        # is deferred for the duration instead (reference counting still frees).
        from akgentic.plugins.registry import use_registry

        collecting = gc.isenabled()
        gc.disable()
        try:
            with use_registry(self.registry):
                return self._restore(process, subscribers, configure, point)
        finally:
            if collecting:
                gc.enable()

    def _restore(
        self,
        process: Process,
        subscribers: Sequence[EventSubscriber] | None,
        configure: ConfigTransform | None,
        point: RestorePoint | None,
    ) -> TeamRuntime:
        team_id = process.team_id
        # Phase 1: load, from the newest usable checkpoint on (akgentic.team.checkpoint).
        if point is None:
            point = load_restore_point(self.event_store, team_id)
        events = restore_messages(point.events)
        if not events:
            raise ValueError(f"cannot restore team {team_id}: its event log is empty")
        states = self.event_store.load_agent_states(team_id)

        starts = live_starts(events)
        orchestrator_start = next(
            (
                s
                for s in starts
                if s.sender is not None and _actor_type(s.sender) == _ORCHESTRATOR_TYPE
            ),
            None,
        )
        if orchestrator_start is None or orchestrator_start.sender is None:
            raise ValueError(f"cannot restore team {team_id}: its log has no orchestrator start")
        agents = [
            (s.sender.agent_id, s) for s in starts if s is not orchestrator_start and s.sender
        ]
        agents.sort(key=lambda item: 0 if item[1].config.role == TOOL_ACTOR_ROLE else 1)  # stable

        # Phase 2: rebuild.
        system = self.actor_system
        orchestrator: ActorAddress | None = None
        try:
            orchestrator = system.createActor(
                Orchestrator,
                restoring=True,
                agent_id=orchestrator_start.sender.agent_id,
                team_id=team_id,
                user_id=process.user_id,
                user_email=process.user_email,
                config=orchestrator_start.config.model_copy(deep=True),
            )
            orch: Orchestrator = system.proxy_ask(orchestrator, Orchestrator, _ASK_TIMEOUT)
            orch.set_metadata(process.metadata)
            limits = process.team_card.budget
            if limits is not None:
                # Imported here: a team without a budget never loads the counter.
                from akgentic.llm.team_budget import BUDGET_SERVICE, TeamBudget

                lead = process.team_card.lead_name
                budget = TeamBudget.rebuild(limits, events, lead=lead)
                orch.set_team_service(BUDGET_SERVICE, budget)

            live: dict[UUID, ActorAddress] = {orchestrator.agent_id: orchestrator}
            for agent_id, start in agents:
                live[agent_id] = self._respawn(start, live, orchestrator, configure)

            def to_live(address: ActorAddress) -> ActorAddress:
                if isinstance(address, ActorAddressProxy):
                    return live.get(address.agent_id, address)
                return address

            replay = [map_addresses(message, to_live) for message in events]
            by_id = _index_states(states)
            snapshots: dict[UUID, AgentStateSnapshot] = {}
            for agent_id, start in agents:
                snapshot = by_id.get(str(agent_id)) or by_id.get(start.config.name)
                if snapshot is not None:
                    snapshots[agent_id] = snapshot
                    ProxyWrapper(live[agent_id], timeout=_ASK_TIMEOUT).init_state(snapshot.state)
            history: dict[UUID, list[EventMessage]] = {}
            for message in replay:
                if isinstance(message, EventMessage) and message.sender is not None:
                    history.setdefault(message.sender.agent_id, []).append(message)
            for agent_id, _start in agents:
                own = history.get(agent_id)
                if own:
                    ProxyWrapper(live[agent_id], timeout=_ASK_TIMEOUT).init_llm_context(own)
            profiles = hireable_catalog(process.team_card)
            if configure is not None:
                profiles = [
                    p.model_copy(update={"config": configure(p.config.model_copy(deep=True))})
                    for p in profiles
                ]
            orch.register_agent_profiles(profiles)
            monitor = ActivityMonitor()
            for subscriber in subscribers or ():
                orch.subscribe(subscriber)

            # Phase 3: replay. The respawned actors have just recorded fresh
            # StartMessages; the orchestrator's history is reset so that, once the
            # log is replayed, it holds each start exactly once, as stored.
            ask_call(orchestrator, "messages", "clear")
            # Tells keep the mailbox order; the ask at the end returns once every
            # replayed message went through.
            tell = ProxyWrapper(orchestrator, ask=False)
            live_ids = {agent_id for agent_id, _start in agents}
            for message in replay:
                tell.restore_message(message)
                if isinstance(message, StartMessage) and message.sender is not None:
                    snapshot = snapshots.get(message.sender.agent_id)
                    if snapshot is not None and message.sender.agent_id in live_ids:
                        ProxyWrapper(live[message.sender.agent_id], ask=False).notify_state_change(
                            snapshot.state
                        )
            orch.end_restoration()
            orch.subscribe(monitor)
            return self._runtime(process, orchestrator, agents, live, monitor)
        except BaseException:
            if orchestrator is not None:
                stop_orchestrator(system, orchestrator, grace=5.0)
            raise

    def _respawn(
        self,
        start: StartMessage,
        live: dict[UUID, ActorAddress],
        orchestrator: ActorAddress,
        configure: ConfigTransform | None,
    ) -> ActorAddress:
        sender = start.sender
        assert sender is not None
        actor_type = _actor_type(sender)
        try:
            agent_class: type[Akgent[Any, Any]] = import_class(actor_type)
        except Exception as exc:
            raise ValueError(
                f"cannot restore agent {sender.name}: its class {actor_type!r} "
                f"cannot be imported ({exc})"
            ) from exc
        parent = orchestrator
        if start.parent is not None:
            found = live.get(start.parent.agent_id)
            if found is None:
                logger.warning(
                    "restoring %s: its parent %s is not alive; attaching it to the orchestrator",
                    sender.name,
                    start.parent.name,
                )
            else:
                parent = found
        config: BaseConfig = start.config.model_copy(deep=True)
        if configure is not None:
            config = configure(config)
        creator: Akgent[Any, Any] = self.actor_system.proxy_ask(parent, Akgent, _ASK_TIMEOUT)
        address: ActorAddress = creator.createActor(
            agent_class, agent_id=sender.agent_id, config=config
        )
        return address

    def _runtime(
        self,
        process: Process,
        orchestrator: ActorAddress,
        agents: list[tuple[UUID, StartMessage]],
        live: dict[UUID, ActorAddress],
        monitor: ActivityMonitor,
    ) -> TeamRuntime:
        card = process.team_card
        addrs = {start.config.name: live[agent_id] for agent_id, start in agents}
        entry_name = card.entry_point.name
        entry = addrs.get(entry_name)
        if entry is None:
            raise ValueError(
                f"cannot restore team {process.team_id}: its entry point {entry_name!r} "
                "is not among the live agents of its log"
            )
        supervisors = {name: addrs[name] for name in card.supervisor_names if name in addrs}
        runtime = TeamRuntime(
            id=process.team_id,
            team=card,
            orchestrator_addr=orchestrator,
            entry_addr=entry,
            supervisor_addrs=supervisors,
            addrs=addrs,
            actor_system=self.actor_system,
        )
        runtime.attach_monitor(monitor)
        return runtime


def _index_states(states: Sequence[AgentStateSnapshot]) -> dict[str, AgentStateSnapshot]:
    """Snapshots by agent id, and by name for rows keyed that way by older writers."""
    index: dict[str, AgentStateSnapshot] = {}
    for snapshot in states:
        index[snapshot.agent_id] = snapshot
        if snapshot.name and snapshot.name not in index:
            index[snapshot.name] = snapshot
    return index
