"""Agents the team lifecycle tests spawn; importable by dotted path so restores can find them.

The tests' conftest puts this directory on ``sys.path`` (and subprocess tests on
``PYTHONPATH``).
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import Field, field_validator

from akgentic.core import BaseConfig, BaseState, UserProxy
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.team import TeamMetadata


class EchoState(BaseState):
    """What an Echo agent has seen."""

    seen: list[str] = Field(default_factory=list)


class Noted(BaseState):
    """Payload of the domain events Echo publishes (any serializable model works)."""

    text: str = ""


class Echo(Akgent[BaseConfig, EchoState]):
    """Records every UserMessage in its (persisted) state and publishes an event for it."""

    def on_start(self) -> None:
        self.state = EchoState().observer(self)
        self.restored_events: list[EventMessage] = []

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        self.state.seen.append(message.content)
        self.notify_event(Noted(text=message.content))

    def init_llm_context(self, events: list[EventMessage]) -> None:
        self.restored_events = list(events)

    def restored_texts(self) -> list[str]:
        return [e.event.text for e in self.restored_events if isinstance(e.event, Noted)]

    def seen(self) -> list[str]:
        return list(self.state.seen)


class Quiet(Akgent[BaseConfig, BaseState]):
    """Takes every UserMessage and does nothing with it (the cheapest member there is)."""

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        return None


class CounterTool(Akgent[BaseConfig, BaseState]):
    """A ``#``-named singleton tool actor."""


class ToolUser(Echo):
    """On start, looks up (or creates) the ``#Counter`` tool actor, like a tool card would."""

    def on_start(self) -> None:
        super().on_start()
        self.tool = self.orchestrator_proxy_ask.getChildrenOrCreate(
            CounterTool, BaseConfig(name="#Counter", role="ToolActor")
        )

    def tool_id(self) -> Any:
        return self.tool.agent_id


class Human(UserProxy):
    """A user proxy remembering what it was sent."""

    def on_start(self) -> None:
        self.inbox: list[str] = []

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        self.inbox.append(message.content)


class Broken(Akgent[BaseConfig, BaseState]):
    """Fails while starting, to exercise a build that has to roll back."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("this agent cannot start")


class CaseMetadata(TeamMetadata):
    """Business metadata with two indexed fields."""

    tenant: str = Field(json_schema_extra={"indexed": True})
    priority: int = Field(default=1, json_schema_extra={"indexed": True})


class EmitThrough(Echo):
    """An Echo whose ``_emit`` is its own: ``send`` must route its SentMessage through it."""

    def _emit(self, cls: type[Message], **fields: Any) -> None:
        super()._emit(cls, **fields)


class TrimmedMessage(UserMessage):
    """A message type whose validation changes the text: never built without validating."""

    @field_validator("content")
    @classmethod
    def _trim(cls, value: str) -> str:
        return value.strip()


#: Held closed by a test while a Gated member must stay busy.
GATE = threading.Event()


class Gated(Akgent[BaseConfig, BaseState]):
    """Busy with each UserMessage until the test opens :data:`GATE` (bounded)."""

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        GATE.wait(30)
