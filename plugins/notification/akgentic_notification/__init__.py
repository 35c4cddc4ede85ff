"""The ``notification`` card: reminders an agent schedules for itself.

Also importable as ``akgentic.tool.notification`` (a seed import path this plugin
serves). The actor module is imported only when a card binds it.
"""

from akgentic_notification.card import (
    CancelNotification,
    NotificationTool,
    PendingNotifications,
    RegisterNotification,
)
from akgentic_notification.models import (
    DEFAULT_MESSAGE_CLASS,
    DELIVERY_GRACE_S,
    MAX_CONTENT_CHARS,
    MAX_PENDING_PER_OWNER,
    NOTIFICATION_ACTOR_NAME,
    TICK_INTERVAL_S,
    NotificationConfig,
    NotificationState,
    PendingNotification,
    resolve_message_class,
)

__all__ = [
    "DEFAULT_MESSAGE_CLASS",
    "DELIVERY_GRACE_S",
    "MAX_CONTENT_CHARS",
    "MAX_PENDING_PER_OWNER",
    "NOTIFICATION_ACTOR_NAME",
    "TICK_INTERVAL_S",
    "CancelNotification",
    "NotificationConfig",
    "NotificationState",
    "NotificationTool",
    "PendingNotification",
    "PendingNotifications",
    "RegisterNotification",
    "resolve_message_class",
]
