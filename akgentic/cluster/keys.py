"""Idempotency keys: one inbound message id per ``(team, key)``, found again in the log.

The id of an inbound message is derived from its key (a UUID version 5), so
the log itself records which keys were delivered: a worker that takes a team
over reads the ids back from the stored ``SentMessage`` events and answers a
retried key with the first delivery's sequence instead of delivering again.
"""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID, uuid5

from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team.models import PersistedEvent, is_inbound_id

__all__ = ["KEY_NAMESPACE", "inbound_id", "inbound_ids", "is_inbound_id"]

#: Namespace of inbound message ids (fixed forever: ids in stored logs depend on it).
KEY_NAMESPACE = UUID("6f1d3c0e-8a4b-5c2d-9e7f-a1b2c3d4e5f6")


def inbound_id(team_id: UUID, key: str) -> UUID:
    """The message id of the inbound message with ``key`` for ``team_id``."""
    return uuid5(KEY_NAMESPACE, f"{team_id}:{key}")


def inbound_ids(events: Iterable[PersistedEvent]) -> dict[UUID, int]:
    """Inbound message id -> sequence of its first delivery, from a stored log."""
    found: dict[UUID, int] = {}
    for stored in events:
        event = stored.event
        if isinstance(event, SentMessage) and is_inbound_id(event.message.id):
            found.setdefault(event.message.id, stored.sequence)
    return found
