"""Agents the PostgreSQL CLI and crash tests run in child processes (importable by path)."""

from __future__ import annotations

from pydantic import Field

from akgentic.core import BaseConfig, BaseState
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import UserMessage
from akgentic.team import TeamMetadata


class EchoState(BaseState):
    """What an Echo agent has seen."""

    seen: list[str] = Field(default_factory=list)


class Echo(Akgent[BaseConfig, EchoState]):
    """Records every UserMessage in its persisted state."""

    def on_start(self) -> None:
        self.state = EchoState().observer(self)

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        self.state.seen.append(message.content)
        self.state.notify_state_change()

    def seen(self) -> list[str]:
        return list(self.state.seen)


class CaseMetadata(TeamMetadata):
    """Metadata of the CLI test team."""

    tenant: str = Field(json_schema_extra={"indexed": True})
