"""The span records the mapping makes, their ids, and the content helpers.

Plain data, no OpenTelemetry import: :mod:`akgentic_otel.export` turns a
:class:`SpanRecord` into an SDK span. Ids are BLAKE2 digests of the team id and a key
built from stored message ids, so the same log always gives the same ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any
from uuid import UUID

__all__ = [
    "AttributeValue",
    "SpanEventRecord",
    "SpanRecord",
    "parts",
    "role",
    "span_id",
    "text",
    "trace_id",
]

AttributeValue = str | bool | int | float


def trace_id(team_id: UUID, root_message: UUID) -> int:
    """The trace id of the turn started by ``root_message`` (128 bits, never 0)."""
    digest = blake2b(f"{team_id}/{root_message}".encode(), digest_size=16).digest()
    return int.from_bytes(digest, "big") or 1


def span_id(team_id: UUID, key: str) -> int:
    """The span id of the span ``key`` names in the team's log (64 bits, never 0)."""
    digest = blake2b(f"{team_id}/{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") or 1


@dataclass
class SpanEventRecord:
    """A point in time on a span (a message the span's member sent)."""

    name: str
    time_ns: int
    attributes: dict[str, AttributeValue] = field(default_factory=dict)


@dataclass
class SpanRecord:
    """One span, as plain data: what :mod:`akgentic_otel.export` turns into OTLP."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    #: ``internal`` or ``client`` (a model request leaves the process).
    kind: str = "internal"
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    events: list[SpanEventRecord] = field(default_factory=list)
    #: Set when the work failed: the ``error.type`` and a description.
    error: str | None = None
    error_message: str = ""
    #: False while the log holds no end for it (still running, or the process died).
    complete: bool = False


def text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def parts(message_parts: Iterable[Any]) -> list[dict[str, Any]]:
    """Parts of a pydantic-ai message in the conventions' ``parts`` shape."""
    parts: list[dict[str, Any]] = []
    for part in message_parts:
        kind = getattr(part, "part_kind", "")
        if kind == "tool-call":
            parts.append(
                {
                    "type": "tool_call",
                    "id": text(getattr(part, "tool_call_id", "")),
                    "name": text(getattr(part, "tool_name", "")),
                    "arguments": text(getattr(part, "args", "")),
                }
            )
        elif kind in ("tool-return", "retry-prompt"):
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": text(getattr(part, "tool_call_id", "")),
                    "response": text(getattr(part, "content", "")),
                }
            )
        else:
            parts.append({"type": "text", "content": text(getattr(part, "content", ""))})
    return parts


def role(part_kind: str) -> str:
    if part_kind == "system-prompt":
        return "system"
    if part_kind in ("tool-return", "retry-prompt"):
        return "tool"
    return "user"
