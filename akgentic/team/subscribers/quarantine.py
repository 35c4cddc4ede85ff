"""The record that takes the place of an event the store refused to write.

A store may refuse one event for what it holds (a value its encoding or a
size limit rejects) while it takes every other. The persistence subscriber
then writes an :class:`~akgentic.team.messages.EventQuarantined` under the
refused event's sequence number instead: the log stays gap-free, the refused
event stays inspectable in it, and the team's persistence goes on.
"""

from __future__ import annotations

import json
from typing import Any

from akgentic.core.utils.serializer import class_path, serialize_base_model
from akgentic.team.messages import EventQuarantined
from akgentic.team.models import PersistedEvent

__all__ = ["QUARANTINE_TEXT_LIMIT", "quarantined"]

#: Characters of the refused message's text kept in its quarantine record: a
#: store that refused the event for its size must take the record.
QUARANTINE_TEXT_LIMIT = 256 * 1024
#: Characters of the store's error message kept in the record.
_REASON_LIMIT = 2000


def _ascii_text(message: Any) -> str:
    """The message's JSON text in ASCII: nothing in it can be refused for its encoding."""
    try:
        return json.dumps(serialize_base_model(message), ensure_ascii=True, default=repr)
    except (TypeError, ValueError, RecursionError) as exc:
        # Not even the generic dump takes it: keep what its repr shows.
        return json.dumps({"repr": ascii(message), "dump_error": ascii(exc)})


def quarantined(event: PersistedEvent, error: BaseException) -> PersistedEvent:
    """The event that stands for ``event`` in the log once the store refused it."""
    message = event.event
    text = _ascii_text(message)
    reason = ascii(f"{type(error).__name__}: {error}")[1:-1][:_REASON_LIMIT]
    record = EventQuarantined(
        event_type=class_path(type(message)),
        reason=reason,
        original=text[:QUARANTINE_TEXT_LIMIT],
        original_size=len(text),
        truncated=len(text) > QUARANTINE_TEXT_LIMIT,
        team_id=event.team_id,
        parent_id=getattr(message, "id", None),
    )
    return PersistedEvent(
        team_id=event.team_id, sequence=event.sequence, event=record, timestamp=event.timestamp
    )
