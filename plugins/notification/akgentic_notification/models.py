"""Notification entries, the actor's state and configuration, and the delivery class check.

The class paths of :class:`PendingNotification`, :class:`NotificationState` and
:class:`NotificationConfig` appear in stored event logs: never move or rename them.
Time is read through :func:`now` and the tick period from :data:`TICK_INTERVAL_S`,
both looked up at use, so tests can move the clock and tick fast.
"""

from __future__ import annotations

import importlib
import re
from datetime import UTC, datetime

from pydantic import AwareDatetime, Field

from akgentic.plugin_api import (
    ActorAddress,
    BaseConfig,
    BaseState,
    Message,
    SerializableBaseModel,
)

__all__ = [
    "DEFAULT_MESSAGE_CLASS",
    "DELIVERY_GRACE_S",
    "MAX_CONTENT_CHARS",
    "MAX_DELAY_CAP_S",
    "MAX_PENDING_PER_OWNER",
    "NOTIFICATION_ACTOR_NAME",
    "TICK_INTERVAL_S",
    "NotificationConfig",
    "NotificationState",
    "PendingNotification",
    "check_message_class_path",
    "now",
    "resolve_message_class",
]

DEFAULT_MESSAGE_CLASS = "akgentic.agent.messages.AgentMessage"
"""What a notification arrives as unless the card names another class."""

NOTIFICATION_ACTOR_NAME = "#NotificationTool"
"""Name of the team's single notification actor (``#``: a tool actor)."""

TICK_INTERVAL_S = 1.0
"""Seconds between two scans for due entries."""

TICK_ASK_TIMEOUT_S = 10.0
"""How long the tick thread waits for one scan before trying again."""

ROSTER_ASK_TIMEOUT_S = 5.0
"""How long a scan waits for the orchestrator's roster."""

DELIVERY_GRACE_S = 300.0
"""Seconds past its due time an entry waits for an absent owner before it is dropped."""

MAX_PENDING_PER_OWNER = 50
MAX_CONTENT_CHARS = 4000
MAX_DELAY_CAP_S = 2_592_000  # 30 days: the highest max_delay_seconds a card may set

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
_PROBE = {"content": "notification probe", "type": "notification"}


def now() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class PendingNotification(SerializableBaseModel):
    """One scheduled reminder.

    Attributes:
        notification_id: Team-wide id, never reused.
        owner: Address of the agent that scheduled it (and receives it).
        content: The text delivered.
        created_at: When it was scheduled.
        fire_at: When it falls due (absolute, so a resume keeps the schedule).
        message_class: Dotted path of the message class it is delivered as.
    """

    notification_id: int
    owner: ActorAddress
    content: str
    created_at: AwareDatetime
    fire_at: AwareDatetime
    message_class: str = DEFAULT_MESSAGE_CLASS


class NotificationState(BaseState):
    """Every pending reminder of the team, and the next id to hand out."""

    pending: dict[int, PendingNotification] = Field(default_factory=dict)
    next_id: int = 1


class NotificationConfig(BaseConfig):
    """Configuration of the notification actor.

    Attributes:
        message_class: Delivery class for entries that do not name one.
    """

    message_class: str = DEFAULT_MESSAGE_CLASS


def check_message_class_path(path: str) -> str:
    """``path`` when it is dotted-path syntax (``package.module.Class``), else ValueError."""
    if not isinstance(path, str) or not _DOTTED.fullmatch(path):
        raise ValueError(
            f"message_class {path!r} must be a dotted path such as {DEFAULT_MESSAGE_CLASS!r}"
        )
    return path


def resolve_message_class(path: str) -> type[Message]:
    """The message class at ``path``, checked to carry a notification.

    The module is imported (nothing in it is called); the attribute must subclass the
    core ``Message``, declare ``content`` and ``type``, and accept
    ``{"content": ..., "type": "notification"}``.

    Raises:
        ValueError: Naming the path and the reason.
    """
    check_message_class_path(path)
    module_name, _, attribute = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"message_class {path!r}: cannot import {module_name!r} ({error})"
        ) from None
    found = getattr(module, attribute, None)
    if not (isinstance(found, type) and issubclass(found, Message)):
        raise ValueError(f"message_class {path!r} is not a subclass of the core Message")
    fields = getattr(found, "model_fields", {})
    if "content" not in fields or "type" not in fields:
        raise ValueError(f"message_class {path!r} must declare 'content' and 'type' fields")
    try:
        found.model_validate(_PROBE)
    except Exception as error:
        raise ValueError(
            f"message_class {path!r} refuses a notification "
            f"(content + type='notification'): {error}"
        ) from None
    return found
