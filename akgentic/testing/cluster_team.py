"""A tiny team for runtime tests and benchmarks: agents that take messages and keep quiet.

Importable by worker processes (``akgentic.testing.cluster_team.QuietAgent``),
so a fleet can build and resume it without the test's files on its path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from akgentic.core import AgentCard, BaseConfig, BaseState
from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import UserMessage
from akgentic.team import TeamCard, TeamCardMember
from akgentic.team.metadata import TeamMetadata
from akgentic.tool import ToolCard

__all__ = [
    "HostCommandConfig",
    "HostCommandTool",
    "QuietAgent",
    "QuietMetadata",
    "host_command_team_card",
    "quiet_team_card",
]


class QuietMetadata(TeamMetadata):
    """Metadata of a quiet team: ``tenant`` is indexed (filterable in ``list_teams``)."""

    tenant: str = Field(json_schema_extra={"indexed": True})
    note: str = ""


class QuietAgent(Akgent[BaseConfig, BaseState]):
    """Receives user messages (each is recorded by the team) and answers nothing."""

    def receiveMsg_UserMessage(self, message: UserMessage, sender: ActorAddress) -> None:
        return None


def quiet_team_card(name: str = "quiet-team") -> TeamCard:
    """An entry point and one supervisor, both :class:`QuietAgent`."""

    def card(agent: str, role: str) -> AgentCard:
        return AgentCard(
            description=role,
            skills=[role.lower()],
            agent_class=QuietAgent,
            config=BaseConfig(name=agent, role=role),
        )

    return TeamCard(
        name=name,
        description="A team that records what it is sent",
        entry_point=TeamCardMember(card=card("@Entry", "Entry")),
        members=[TeamCardMember(card=card("@Quiet", "Quiet"))],
        message_types=[UserMessage],
        metadata_type=QuietMetadata,
    )


class HostCommandTool(ToolCard):
    """A card that declares a host process (as a stdio MCP server would) and offers no tool."""

    command: str = "touch /tmp/akgentic-host-command-ran"

    def get_tools(self) -> list[Callable[..., Any]]:
        return []

    def host_processes(self) -> list[str]:
        return [f"a host command: {self.command!r}"]


class HostCommandConfig(BaseConfig):
    """A quiet agent's config that carries tool cards, so admission checks can see them."""

    tools: list[ToolCard] = Field(default_factory=list)


def host_command_team_card() -> TeamCard:
    """A quiet team whose supervisor carries a :class:`HostCommandTool`: refused remotely."""
    team = quiet_team_card("host-command-team")
    member = AgentCard(
        description="Quiet",
        skills=["quiet"],
        agent_class=QuietAgent,
        config=HostCommandConfig(name="@Quiet", role="Quiet", tools=[HostCommandTool()]),
    )
    return team.model_copy(update={"members": [TeamCardMember(card=member)]})
