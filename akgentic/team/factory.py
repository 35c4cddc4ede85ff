"""TeamFactory: from a TeamCard to live actors, in one call.

Build order (each step finishes before the next starts):

1. the orchestrator, a root actor carrying the team id and owner;
2. the subscribers, each also handed the orchestrator's own ``StartMessage``
   so that a persistence subscriber records it as event 1;
3. the team metadata and the team budget (when the card has one), set before any
   member exists;
4. the entry point, then each member tree, every agent spawned *through its
   parent* (the parent owns and stops it); ``headcount > 1`` spawns
   ``<name>_0`` ... and children go under the last instance;
5. the role catalog: the card's ``agent_profiles`` (marked ``can_be_hired``);
   member cards are not registered, so a member's role is not hireable unless a
   profile names it;
6. the welcome message, recorded as sent to the entry point.

If any step fails, everything built so far is stopped and the error re-raised.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from akgentic.core.actor_address import ActorAddress
from akgentic.core.actor_system import ActorSystem
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import ProxyWrapper
from akgentic.team.card import TeamCard, TeamCardMember, spawned_name
from akgentic.team.messages import WelcomeMessage
from akgentic.team.runtime import TeamRuntime
from akgentic.team.subscribers.activity import ActivityMonitor

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry

__all__ = ["ORCHESTRATOR_NAME", "TeamFactory", "hireable_catalog", "stop_orchestrator"]

logger = logging.getLogger(__name__)

ORCHESTRATOR_NAME = "@Orchestrator"
_ASK_TIMEOUT = 30.0
_STOP_GRACE = 30.0


def hireable_catalog(team_card: TeamCard) -> list[AgentCard]:
    """The cards to register in the orchestrator's role catalog: the ``agent_profiles``.

    The catalog is the list of roles agents may hire, so member cards stay out of it.
    Each profile is copied with ``can_be_hired`` set, which only informs readers of
    the catalog: being in it is what makes a role hireable.
    """
    return [card.model_copy(update={"can_be_hired": True}) for card in team_card.agent_profiles]


def stop_orchestrator(
    actor_system: ActorSystem, orchestrator: ActorAddress, grace: float = _STOP_GRACE
) -> None:
    """Stop a team through its orchestrator and wait for the end (never raises)."""
    try:
        event = ProxyWrapper(orchestrator, ask=True, timeout=grace).stop(grace)
        event.wait(grace + 5.0)
    except Exception:
        logger.debug("stopping orchestrator %r failed", orchestrator, exc_info=True)
    ref = getattr(orchestrator, "actor_ref", None)
    if ref is not None and ref.is_alive():
        with contextlib.suppress(Exception):
            ref.stop(block=True, timeout=5.0)


class TeamFactory:
    """Static builder of teams (see the module docstring for the order)."""

    @staticmethod
    def build(
        team_card: TeamCard,
        actor_system: ActorSystem,
        subscribers: Sequence[EventSubscriber] | None = None,
        team_id: UUID | None = None,
        *,
        user_id: str | None = None,
        user_email: str | None = None,
        metadata: Any = None,
        registry: PluginRegistry | None = None,
    ) -> TeamRuntime:
        """Spawn the team ``team_card`` describes and return its runtime.

        ``registry`` is the plugin registry current while the team is built (for
        anything resolved by name on the way); default: the current one.
        """
        from akgentic.plugins.registry import use_registry

        with use_registry(registry):
            return TeamFactory._build(
                team_card,
                actor_system,
                subscribers,
                team_id,
                user_id=user_id,
                user_email=user_email,
                metadata=metadata,
            )

    @staticmethod
    def _build(
        team_card: TeamCard,
        actor_system: ActorSystem,
        subscribers: Sequence[EventSubscriber] | None,
        team_id: UUID | None,
        *,
        user_id: str | None,
        user_email: str | None,
        metadata: Any,
    ) -> TeamRuntime:
        if team_card.entry_point.headcount != 1:
            raise ValueError(
                f"entry_point {team_card.entry_point.name!r} must have headcount 1, "
                f"not {team_card.entry_point.headcount}"
            )
        orchestrator: ActorAddress | None = None
        try:
            orchestrator = actor_system.createActor(
                Orchestrator,
                config=BaseConfig(name=ORCHESTRATOR_NAME, role="Orchestrator"),
                team_id=team_id,
                user_id=user_id,
                user_email=user_email,
            )
            orch: Orchestrator = actor_system.proxy_ask(orchestrator, Orchestrator, _ASK_TIMEOUT)
            monitor = ActivityMonitor()
            attach_subscribers(orch, [*(subscribers or ()), monitor])
            orch.set_metadata(metadata)
            if team_card.budget is not None:
                # Before any member exists: the first model request already finds it.
                # Imported here: a team without a budget never loads the counter.
                from akgentic.llm.team_budget import BUDGET_SERVICE, TeamBudget

                budget = TeamBudget(team_card.budget, lead=team_card.lead_name)
                orch.set_team_service(BUDGET_SERVICE, budget)

            addrs: dict[str, ActorAddress] = {}
            entry = _spawn_tree(actor_system, orchestrator, team_card.entry_point, addrs)[-1]
            supervisors: dict[str, ActorAddress] = {}
            for member in team_card.members:
                for name, address in zip(
                    member.spawned_names,
                    _spawn_tree(actor_system, orchestrator, member, addrs),
                    strict=True,
                ):
                    supervisors[name] = address

            orch.register_agent_profiles(hireable_catalog(team_card))
            if team_card.welcome_message is not None:
                welcome = WelcomeMessage(content=team_card.welcome_message)
                welcome.init(orchestrator, orchestrator.team_id)
                actor_system.tell(orchestrator, SentMessage(message=welcome, recipient=entry))

            runtime = TeamRuntime(
                id=orchestrator.team_id,
                team=team_card,
                orchestrator_addr=orchestrator,
                entry_addr=entry,
                supervisor_addrs=supervisors,
                addrs=addrs,
                actor_system=actor_system,
            )
            runtime.attach_monitor(monitor)
            return runtime
        except BaseException:
            if orchestrator is not None:
                stop_orchestrator(actor_system, orchestrator, grace=5.0)
            raise


def attach_subscribers(orch: Orchestrator, subscribers: Sequence[EventSubscriber]) -> None:
    """Subscribe each subscriber and hand it what the orchestrator recorded so far.

    Right after creation that is the orchestrator's own ``StartMessage``, which
    thereby becomes event 1 of a persisted log.
    """
    for subscriber in subscribers:
        orch.subscribe(subscriber)
    history = [Orchestrator.snapshot_for_subscribers(m) for m in list(orch.get_messages())]
    for subscriber in subscribers:
        for message in history:
            subscriber.on_message(message)


def _spawn_tree(
    actor_system: ActorSystem,
    parent: ActorAddress,
    member: TeamCardMember,
    addrs: dict[str, ActorAddress],
) -> list[ActorAddress]:
    """Spawn ``member`` (all instances) under ``parent``, then its subtree; return instances."""
    card = member.card
    agent_class = card.get_agent_class()
    creator: Akgent[Any, Any] = actor_system.proxy_ask(parent, Akgent, _ASK_TIMEOUT)
    instances: list[ActorAddress] = []
    for index in range(member.headcount):
        config = card.get_config_copy()
        config.name = spawned_name(card.config.name, member.headcount, index)
        address = creator.createActor(agent_class, config=config)
        addrs[config.name] = address
        instances.append(address)
    for child in member.members:
        _spawn_tree(actor_system, instances[-1], child, addrs)
    return instances
