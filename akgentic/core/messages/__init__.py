"""Messages exchanged by actors and reported to the orchestrator."""

from akgentic.core.messages.message import (
    CancelMessage,
    Message,
    ResultMessage,
    StopRecursively,
    UserMessage,
    date_time_factory,
)
from akgentic.core.messages.orchestrator import (
    ErrorMessage,
    EventMessage,
    HandledMessage,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    WarningMessage,
)
from akgentic.core.messages.types import ClosedNotification, TeamStoppingEvent

__all__ = [
    "CancelMessage",
    "ClosedNotification",
    "ErrorMessage",
    "EventMessage",
    "HandledMessage",
    "Message",
    "NotificationMessage",
    "ProcessedMessage",
    "ReceivedMessage",
    "ResultMessage",
    "SentMessage",
    "StartMessage",
    "StateChangedMessage",
    "StopMessage",
    "StopRecursively",
    "TeamStoppingEvent",
    "UserMessage",
    "WarningMessage",
    "date_time_factory",
]
