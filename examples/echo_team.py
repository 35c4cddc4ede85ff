"""Echo agents for the examples: the smallest agents that do something visible.

``EchoAgent`` prints every UserMessage it receives as ``Echo: <text>``. The
YAML card ``echo-team.yaml`` next to this file names it ``echo_team.EchoAgent``;
the ``akgentic`` command line imports it because it puts the card's directory
on ``sys.path`` (see docs/teams.md, "Where agent classes are imported from").
"""

from __future__ import annotations

from akgentic.core import AgentCard, BaseConfig, BaseState
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import UserMessage
from akgentic.team import TeamCard, TeamCardMember


class EchoAgent(Akgent[BaseConfig, BaseState]):
    """Prints what it is sent."""

    def receiveMsg_UserMessage(self, message: UserMessage, sender: ActorAddress) -> None:
        print(f"Echo: {message.content}", flush=True)


def echo_team_card() -> TeamCard:
    """The Quick Start card: ``@Entry`` faces the outside and routes to ``@Echo``."""
    entry_card = AgentCard(
        description="Team entry point",
        skills=["routing"],
        agent_class=EchoAgent,
        config=BaseConfig(name="@Entry", role="Entry"),
    )
    echo_card = AgentCard(
        description="Echoes messages",
        skills=["echo"],
        agent_class=EchoAgent,
        config=BaseConfig(name="@Echo", role="Echo"),
    )
    return TeamCard(
        name="echo-team",
        description="Simple echo team",
        entry_point=TeamCardMember(card=entry_card),
        members=[TeamCardMember(card=echo_card)],
        message_types=[UserMessage],
    )
