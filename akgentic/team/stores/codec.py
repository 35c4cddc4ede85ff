"""JSON encoding of the persistence models, shared by the built-in stores.

The tagged dump of each model (``__model__`` markers included) is the
authoritative stored form; columns or file names a store derives from it are
only there to find rows quickly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic_core import PydanticSerializationError, from_json, to_json

from akgentic.core.utils.encodable import encodable, is_encodable
from akgentic.core.utils.json_text import datetime_json_text, model_json_text
from akgentic.core.utils.serializer import (
    resolving_moved_classes,
    serialize_base_model,
    serialize_base_model_for_json,
    serialize_for_json,
)
from akgentic.team.errors import EventLogUnreadableError, TeamRecordUnreadableError
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process
from akgentic.team.resolve import message_type_resolver

#: Answers a class path that no longer imports with the class now living elsewhere.
MovedClassResolver = Callable[[str], Any]

#: Without an explicit resolver, the aliases of the current registry's message types.
_DEFAULT_RESOLVER: MovedClassResolver = message_type_resolver()

__all__ = [
    "MovedClassResolver",
    "compact_dumps",
    "decode_event",
    "decode_process",
    "decode_state",
    "dumps",
    "encode_event",
    "encode_event_data",
    "encode_event_row",
    "encode_process",
    "encode_state",
    "loads",
    "plain",
]


def dumps(data: Any) -> str:
    """Compact JSON, one line (newlines inside strings are escaped), always encodable.

    A lone surrogate in a string (a file name that is not UTF-8) is written as
    its escape (:mod:`akgentic.core.utils.encodable`): no store can refuse the text.
    """
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    if is_encodable(text):
        return text
    return json.dumps(encodable(data), separators=(",", ":"), ensure_ascii=False)


def compact_dumps(data: Any) -> str:
    """:func:`dumps` of already JSON-compatible data, done in Rust (about 4x faster).

    The text may differ from :func:`dumps` in spelling only (``1e-7`` for
    ``1e-07``) and parses to the same values, but for a ``None`` dict key (no
    JSON key is null): ``"None"`` here, ``"null"`` there. Data the fast encoder
    refuses (a lone surrogate in a string) goes through :func:`dumps`, which
    escapes the surrogate.
    """
    try:
        return to_json(data, inf_nan_mode="constants").decode("utf-8")
    except (PydanticSerializationError, UnicodeError, ValueError):
        return dumps(data)


def loads(text: str | bytes) -> Any:
    """Parse JSON text like :func:`json.loads`, about twice as fast.

    ``pydantic_core``'s parser gives the same values for what :func:`dumps`
    writes; anything it rejects (invalid JSON, an escaped lone surrogate) goes
    through :func:`json.loads`, which decides and words the error as before.
    """
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def plain(data: Any) -> Any:
    """``data`` with every str/int subclass (StrEnum...) turned into its plain type."""
    result: Any = json.loads(dumps(data))
    return result


def encode_event(event: PersistedEvent) -> str:
    """The stored JSON text of an event: :func:`compact_dumps` of ``model_dump()``, byte for byte.

    Written directly by :func:`~akgentic.core.utils.json_text.model_json_text`
    (no dump dict, no second pass); an event it leaves to the generic encoder
    goes through :func:`encode_event_data`.
    """
    text = model_json_text(event)
    if text is None:
        text = encode_event_data(event)[1]
    return text


def encode_event_row(event: PersistedEvent) -> tuple[str, str]:
    """The stored text of ``event`` with its timestamp as stored inside it.

    The timestamp is the text of the event's ``timestamp`` field in the
    payload (``isoformat()``), formatted once for both.
    """
    text = model_json_text(event)
    if text is None:
        data, text = encode_event_data(event)
        return data["timestamp"], text
    stamp = event.timestamp
    if type(stamp) is datetime:
        return datetime_json_text(stamp), text
    return serialize_for_json(stamp), text


def encode_event_data(event: PersistedEvent) -> tuple[dict[str, Any], str]:
    """The dump the stored text of ``event`` is made of, and that text.

    The dump comes from :func:`serialize_base_model_for_json` (UUIDs still
    objects, address dicts shared): read columns off it, never keep it. The
    text is :func:`compact_dumps` of ``model_dump()``, byte for byte.
    """
    data = serialize_base_model_for_json(event)
    try:
        return data, to_json(data, inf_nan_mode="constants").decode("utf-8")
    except (PydanticSerializationError, UnicodeError, ValueError):
        data = serialize_base_model(event)  # the slow path decides, as before
        return data, compact_dumps(data)


def decode_event(
    data: str | dict[str, Any],
    team_id: UUID,
    sequence: int,
    resolver: MovedClassResolver | None = None,
) -> PersistedEvent:
    """Rebuild an event; an undecodable one raises ``EventLogUnreadableError``.

    ``resolver`` answers for class paths that moved (default: the aliases the
    current plugin registry's message types declare).
    """
    try:
        raw = loads(data) if isinstance(data, str) else data
        with resolving_moved_classes(resolver or _DEFAULT_RESOLVER):
            return PersistedEvent.model_validate(raw)
    except Exception as exc:
        raise EventLogUnreadableError(
            f"event {sequence} of team {team_id} cannot be decoded: {exc}"
        ) from exc


def encode_state(snapshot: AgentStateSnapshot) -> str:
    """The stored JSON text of an agent state snapshot."""
    return compact_dumps(serialize_base_model(snapshot))


def decode_state(
    data: str | dict[str, Any],
    team_id: UUID,
    agent_id: str,
    resolver: MovedClassResolver | None = None,
) -> AgentStateSnapshot:
    """Rebuild a snapshot; an undecodable one raises ``EventLogUnreadableError``."""
    try:
        raw = loads(data) if isinstance(data, str) else data
        with resolving_moved_classes(resolver or _DEFAULT_RESOLVER):
            return AgentStateSnapshot.model_validate(raw)
    except Exception as exc:
        raise EventLogUnreadableError(
            f"state of agent {agent_id} in team {team_id} cannot be decoded: {exc}"
        ) from exc


def encode_process(process: Process) -> str:
    """The stored JSON text of a team record."""
    return dumps(process.model_dump())


def decode_process(
    data: str | dict[str, Any], team_id: str, resolver: MovedClassResolver | None = None
) -> Process:
    """Rebuild a team record; an undecodable one raises ``TeamRecordUnreadableError``."""
    try:
        raw = loads(data) if isinstance(data, str) else data
        with resolving_moved_classes(resolver or _DEFAULT_RESOLVER):
            return Process.model_validate(raw)
    except Exception as exc:
        raise TeamRecordUnreadableError(
            f"the record of team {team_id} cannot be decoded: {exc}"
        ) from exc
