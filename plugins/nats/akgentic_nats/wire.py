"""The JSON bodies exchanged on NATS: placement messages, requests and replies."""

from __future__ import annotations

import json
from typing import Any

from akgentic.plugin_api import (
    PersistedEvent,
    TeamCard,
    compact_dumps,
    decode_event,
    encode_event,
    loads,
    serialize_base_model,
)

__all__ = ["decode", "decode_card", "encode", "encode_card", "event_from_wire", "event_to_wire"]


def encode(body: dict[str, Any]) -> bytes:
    """A body as UTF-8 JSON."""
    return json.dumps(body, separators=(",", ":")).encode()


def decode(data: bytes) -> dict[str, Any]:
    """A body back from UTF-8 JSON (``{}`` when empty)."""
    if not data:
        return {}
    value = json.loads(data)
    return value if isinstance(value, dict) else {}


def encode_card(card: TeamCard) -> str:
    """A team card as the JSON text stores keep."""
    return compact_dumps(serialize_base_model(card))


def decode_card(text: str) -> TeamCard:
    """A team card back from :func:`encode_card`."""
    return TeamCard.model_validate(loads(text))


def event_to_wire(event: PersistedEvent) -> dict[str, Any]:
    """A stored event as ``{"sequence", "event"}`` (the event as the stores encode it)."""
    return {"sequence": event.sequence, "event": encode_event(event)}


def event_from_wire(team_id: Any, body: dict[str, Any]) -> PersistedEvent:
    """An event back from :func:`event_to_wire`."""
    return decode_event(body["event"], team_id, int(body["sequence"]))
