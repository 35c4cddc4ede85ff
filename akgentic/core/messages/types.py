"""Domain payloads carried inside :class:`EventMessage` (frozen dataclasses, not Messages).

Their dotted paths are persisted inside events: never move these classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

__all__ = ["ClosedNotification", "TeamStoppingEvent"]


@dataclass(frozen=True)
class ClosedNotification:
    """A user dismissed the notification whose message id is ``message_id``."""

    message_id: UUID


@dataclass(frozen=True)
class TeamStoppingEvent:
    """Teardown of the team has begun."""
