"""Messages that the team layer itself puts on a team's event stream."""

from __future__ import annotations

from typing import Literal

from akgentic.core.messages.message import Message

__all__ = ["EventQuarantined", "TeamCheckpoint", "WelcomeMessage"]


class WelcomeMessage(Message):
    """The card's static greeting, published once when a team is first created.

    It is recorded like any other message (so it survives stop and resume) but
    is never re-published on resume.
    """

    content: str
    display_type: Literal["human", "ai", "other"] = "other"


class EventQuarantined(Message):
    """Stands in the log for an event the event store refused to write.

    The refused event keeps its sequence number through this record, so the
    log stays gap-free and the team's persistence goes on. ``event_type`` is
    the refused message's class path, ``reason`` the store's error, and
    ``original`` the refused message's JSON text in ASCII (every character
    escaped as JSON does), cut to ``QUARANTINE_TEXT_LIMIT`` characters when
    ``truncated``; ``original_size`` is its full length.
    """

    event_type: str
    reason: str
    original: str
    original_size: int
    truncated: bool = False


class TeamCheckpoint(Message):
    """The team's rebuilt state as of event ``upto``, stored in its log.

    Written and read by :mod:`akgentic.team.checkpoint`. ``payload`` is the
    JSON text of the events a restore still needs from ``1..upto`` (``count``
    of them), ``checksum`` its SHA-256 (hex). ``owner``
    is the hex of the team id the checkpoint was made for: a copy that a fork
    carried into another team is recognised and left unused. It is never part
    of the team's history: a restore neither replays nor publishes it.

    ``inbound`` (version 2) lists the name-based (UUID version 5) ids of the
    messages sent into the team in ``1..upto``, each with the sequence of its
    first delivery, as ``hex:sequence`` separated by commas: what idempotency
    keys need (:mod:`akgentic.cluster.keys`) without reading the whole log. The
    checksum covers it. A version 1 checkpoint does not know them.
    """

    upto: int
    owner: str
    count: int
    payload: str
    checksum: str
    version: int = 1
    inbound: str = ""
