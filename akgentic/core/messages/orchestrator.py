"""Telemetry messages that actors report to their team's orchestrator."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import Message

__all__ = [
    "ErrorMessage",
    "EventMessage",
    "HandledMessage",
    "NotificationMessage",
    "ProcessedMessage",
    "ReceivedMessage",
    "SentMessage",
    "StartMessage",
    "StateChangedMessage",
    "StopMessage",
    "WarningMessage",
]


class StartMessage(Message):
    """An actor was created (sent from the creating thread)."""

    config: BaseConfig
    parent: ActorAddress | None = None


class StopMessage(Message):
    """An actor stopped."""


class SentMessage(Message):
    """An actor sent ``message`` to ``recipient``; opens a ledger entry."""

    message: Message
    recipient: ActorAddress


class ReceivedMessage(Message):
    """An actor started handling the message ``message_id``."""

    message_id: UUID


class ProcessedMessage(Message):
    """An actor finished handling ``message_id`` (successfully or not)."""

    message_id: UUID


class HandledMessage(Message):
    """A queued message was absorbed into a run without its own turn."""

    message_id: UUID


class NotificationMessage(Message):
    """Something worth showing happened; base of errors and warnings."""

    content_type: str | None = None
    content: str = ""
    current_message: Message | None = None


class ErrorMessage(NotificationMessage):
    """A handler failed; the actor kept running."""

    traceback: str | None = None


class WarningMessage(NotificationMessage):
    """A handler raised ``WarningError``: handled, observable, not a failure."""


class StateChangedMessage(Message):
    """Checkpoint of an actor's state (a detached copy)."""

    state: BaseState


class EventMessage(Message):
    """Generic domain event (LLM activity, tool events, ...)."""

    event: Any = None


class TelemetryBatch(list[Message]):
    """Internal envelope: several telemetry messages of one actor, in emission order.

    Under load an actor holds back its ProcessedMessage until its next
    emission, so one mailbox hop carries both; never persisted. A batch is
    also its own pykka envelope (``message`` is the batch, ``reply_to`` is
    None: nobody waits for it), so it goes into an inbox without a wrapper.
    """

    __slots__ = ()
    reply_to: ClassVar[None] = None

    @property
    def message(self) -> TelemetryBatch:
        """The batch itself (pykka envelope protocol)."""
        return self
