"""The stop half of the event store contract: a team's history ends with its stop.

:class:`StopContract` is mixed into :class:`~akgentic.testing.EventStoreContract`,
so every store runs it. A real team (an actor system, a
:class:`~akgentic.team.TeamManager` over the store under test, a human proxy and
one LLM agent) is stopped while the agent waits on a model request that the
scripted server never answers. The stop must cancel that request: the agent's
actor ends with its team, and the stored log holds nothing an agent said after
the team's stop event but its own teardown (its last state, the close of the
cancelled turn, its stop notice).
Without the cancellation the orphaned run would go on writing model replies
and retries into the stopped team's history, which a resume replays.
"""

from __future__ import annotations

from typing import Any, ClassVar

from akgentic.core.actor_refs import ActorRef, team_actors
from akgentic.core.messages import (
    EventMessage,
    ProcessedMessage,
    StateChangedMessage,
    StopMessage,
)
from akgentic.core.messages.types import TeamStoppingEvent
from akgentic.llm.scripted_server import ScriptedLLMServer, hang
from akgentic.team.store import EventStore
from akgentic.testing.waiting import poll_until

__all__ = ["StopContract", "stop_contract_card"]

#: What an agent may still report after its team's stop event: its own teardown, and
#: the close of the turn the stop cancelled (what tells a resumed team it is not busy).
_TEARDOWN = (StopMessage, StateChangedMessage, ProcessedMessage)


def stop_contract_card(server: ScriptedLLMServer) -> Any:
    """A team card: ``@Human`` as entry point and ``@Thinker``, an LLM agent on ``server``."""
    from akgentic.agent import AgentConfig, BaseAgent, HumanProxy
    from akgentic.agent.messages import AgentMessage
    from akgentic.core import AgentCard, BaseConfig
    from akgentic.team import TeamCard, TeamCardMember

    human = AgentCard(
        description="The human",
        agent_class=HumanProxy,
        config=BaseConfig(name="@Human", role="Human"),
    )
    thinker = AgentCard(
        description="Thinks for a long time",
        agent_class=BaseAgent,
        config=AgentConfig(name="@Thinker", role="Thinker", model_cfg=server.model_config()),
    )
    return TeamCard(
        name="stop-contract",
        description="A team stopped while its agent waits on the model",
        entry_point=TeamCardMember(card=human),
        members=[TeamCardMember(card=thinker)],
        message_types=[AgentMessage],
    )


def _team_alive(team_id: Any) -> list[ActorRef[Any]]:
    return team_actors(team_id)


def _kind(message: Any) -> str:
    """A logged message's class, or the class of the event an EventMessage carries."""
    return type(getattr(message, "event", message)).__name__


class StopContract:
    """Stop cases of the event store contract (mixed into EventStoreContract)."""

    #: Seconds a single wait of the stop case may take (a request arriving, a stop).
    stop_timeout: ClassVar[float] = 30.0

    def test_a_stop_cancels_a_hung_model_request_and_ends_the_teams_history(
        self, store: EventStore
    ) -> None:
        from akgentic.core import ActorSystem
        from akgentic.team import TeamManager

        with ScriptedLLMServer([hang()]) as server:
            system = ActorSystem()
            manager = TeamManager(actor_system=system, event_store=store)
            try:
                runtime = manager.create_team(stop_contract_card(server))
                team_id = runtime.id
                runtime.send("@Thinker Think about it.")
                assert poll_until(lambda: len(server.requests) == 1, timeout=self.stop_timeout), (
                    "the agent never sent its model request"
                )
                manager.stop_team(team_id)
                # The agent's thread was inside the hung request: only a cancelled run frees it.
                assert poll_until(lambda: not _team_alive(team_id), timeout=self.stop_timeout), (
                    "the team's actors outlived its stop: the model request was not cancelled"
                )
                assert len(server.requests) == 1, "the stopped agent sent more model requests"
            finally:
                manager.stop_all()
                system.shutdown(timeout=5)
        events = store.load_events(team_id)
        stops = [
            e.sequence
            for e in events
            if isinstance(e.event, EventMessage) and isinstance(e.event.event, TeamStoppingEvent)
        ]
        assert stops, "the stored log has no stop event"
        orchestrator = runtime.orchestrator_addr.agent_id
        late = [
            f"#{e.sequence} {_kind(e.event)} from {e.event.sender.name}"
            for e in events
            if e.sequence > stops[0]
            and e.event.sender is not None
            and e.event.sender.agent_id != orchestrator
            and not isinstance(e.event, _TEARDOWN)
        ]
        assert not late, f"agents wrote events after the team's stop event: {late}"
