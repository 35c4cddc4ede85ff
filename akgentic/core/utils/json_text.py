"""The JSON text of a serializable model, written directly for the common shapes.

The stored text of a model is ``to_json(serialize_for_json(model))`` (see
:mod:`akgentic.core.utils.serializer`). Building that dict and handing it to
pydantic-core costs more than the text itself for the small, regular models a
team logs (an event, its message, two addresses): a compiled function per
model class writes the text piece by piece instead, and the pieces that never
change are kept as text (field names, class paths, the JSON of an address
snapshot, the last UUIDs and timestamp written).

Compact JSON is compositional: the text of a dict is its keys and the text of
its values joined in order, so every value the fast writers do not know is
handed to ``to_json`` on its own and its text pasted in. Whatever the generic
encoder would refuse or spell differently for a whole model (a lone surrogate
makes it fall back to :func:`json.dumps`) makes :func:`model_json_text` answer
``None``, and the caller takes the generic path, which decides as before.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from json.encoder import encode_basestring
from typing import Any
from uuid import UUID

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.utils.serializer import (
    MODEL_KEY,
    SerializableBaseModel,
    _plan,
    class_path,
    serialize_for_json,
)

__all__ = ["datetime_json_text", "model_json_text", "value_json_text"]


class _LeftToGenericError(Exception):
    """The generic encoder must decide (its text could differ from the pieces')."""


_escape: Callable[[str], str] = encode_basestring


def _str_text(value: str) -> str:
    # json's C escaper writes what pydantic-core writes (the same short escapes,
    # \u00XX in lowercase for the other controls, everything else as is) for
    # every string pydantic-core accepts; a lone surrogate it refuses.
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _LeftToGenericError from None
    return _escape(value)


def _generic_text(value: Any) -> str:
    try:
        return to_json(serialize_for_json(value), inf_nan_mode="constants").decode("utf-8")
    except (PydanticSerializationError, UnicodeError, ValueError):
        raise _LeftToGenericError from None


def _float_text(value: float) -> str:
    return to_json(value, inf_nan_mode="constants").decode("ascii")


def _int_text(value: int) -> str:
    try:
        return int.__repr__(value)
    except ValueError:  # beyond the interpreter's digit limit; pydantic-core has none
        return _generic_text(value)


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


def _none_text(value: None) -> str:
    return "null"


#: id(uuid) -> (uuid, its quoted text). A team's id is in every event and a
#: message's id in the three events about it; holding the UUID keeps its id
#: from being reused while cached.
_uuid_texts: dict[int, tuple[UUID, str]] = {}


def _uuid_text(value: UUID) -> str:
    key = id(value)
    hit = _uuid_texts.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    # pydantic-core writes an exact UUID in Rust, in str()'s spelling, quoted.
    text = to_json(value).decode("ascii")
    if len(_uuid_texts) >= 2048:
        _uuid_texts.clear()  # ids of past messages never come back: start again
    _uuid_texts[key] = (value, text)
    return text


#: The last datetime written and its ``isoformat()``: a stored event's own
#: timestamp is the last value of its text, and the store's timestamp column
#: asks for it again right after.
_last_datetime: tuple[datetime | None, str] = (None, "")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: The start of the last second a UTC datetime was written in, and its text up
#: to the seconds: the events of a team fall in the same second by the thousand.
_second: tuple[datetime, str] = (_EPOCH, _EPOCH.isoformat()[:-6])
_ONE_SECOND = timedelta(seconds=1)
_ZERO = timedelta(0)


def datetime_json_text(value: datetime) -> str:
    """``value.isoformat()`` for an exact :class:`datetime` (the stored spelling)."""
    global _last_datetime, _second
    hit = _last_datetime
    if hit[0] is value:
        return hit[1]
    zone = value.tzinfo
    # Any zone at offset zero is written "+00:00" (pydantic's own UTC, when decoded).
    if zone is UTC or (zone is not None and value.utcoffset() == _ZERO):
        start, prefix = _second
        offset = value - start
        if not _ZERO <= offset < _ONE_SECOND:
            start = value.replace(microsecond=0)
            prefix = start.isoformat()[:-6]  # without its "+00:00"
            _second = (start, prefix)
            offset = value - start
        micro = offset.microseconds
        # isoformat() leaves out a zero fraction.
        text = f"{prefix}.{micro:06d}+00:00" if micro else prefix + "+00:00"
    else:
        text = value.isoformat()
    _last_datetime = (value, text)
    return text


def _datetime_text(value: datetime) -> str:
    return '"' + datetime_json_text(value) + '"'


def _address_text(value: ActorAddressProxy) -> str:
    try:
        return value._shared_json()
    except (PydanticSerializationError, UnicodeError, ValueError):
        raise _LeftToGenericError from None


def _writer_for(t: type) -> Callable[[Any], str]:
    """How the text of values of exactly type ``t`` is written (decided once per type).

    The checks mirror ``serializer._json_dumper_for``: a type it hands to the
    encoder unchanged, or dumps in a way whose text is known here, gets its own
    writer; anything else goes through ``to_json`` of its dump.
    """
    if t is str:
        return _str_text
    if t is bool:
        return _bool_text
    if t is int:
        return _int_text
    if t is float:
        return _float_text
    if t is type(None):
        return _none_text
    if t is UUID:
        return _uuid_text
    if issubclass(t, ActorAddressProxy):
        return _address_text
    if issubclass(t, SerializableBaseModel):
        return _compile(t)
    if t is datetime:
        return _datetime_text
    return _generic_text


_writers: dict[type, Callable[[Any], str]] = {}


def value_json_text(value: Any) -> str:
    """The JSON text of ``to_json(serialize_for_json(value))``; raises ``_LeftToGenericError``."""
    t = type(value)
    write = _writers.get(t)
    if write is None:
        write = _writers[t] = _writer_for(t)
    return write(value)


def model_json_text(model: BaseModel) -> str | None:
    """The compact JSON text of ``serialize_base_model(model)``, or None.

    None means the generic encoder must decide (a lone surrogate in a string,
    a value ``to_json`` refuses): the text it then produces may not be the
    pieces' (its fallback, :func:`json.dumps`, spells floats its own way).
    """
    write = _compiled.get(type(model))
    try:
        if write is None:
            write = _compile(type(model))
        return write(model)
    except _LeftToGenericError:
        return None


_compiled: dict[type, Callable[[Any], str]] = {}


def _compile(cls: type[BaseModel]) -> Callable[[Any], str]:
    """One text writer per model class, its field loop unrolled.

    Each field value is read, turned by its type's writer into text, and the
    text joined with the constant pieces (keys, the class path) in field
    order: the object ``to_json`` would write for the model's dump.
    """
    found = _compiled.get(cls)
    if found is not None:
        return found
    plan = _plan(cls)
    namespace: dict[str, Any] = {
        "_writer": _writers.get,
        "_text": value_json_text,
        "_UUID": UUID,
        "_str": str,
        "_Proxy": ActorAddressProxy,
        "_datetime": datetime,
        "_uuids": _uuid_texts.get,
        "_uuid_text": _uuid_text,
        "_escape": _escape,
        "_str_text": _str_text,
        "_address_text": _address_text,
        "_datetime_json_text": datetime_json_text,
    }
    # Every field is read first: by subscript, and only if one is missing from the
    # instance's dict (a model built without validation) through .get, as dumps do.
    names = [name for name, _ in plan]
    lines = ["def write(model):", "    d = model.__dict__", "    try:"]
    lines += [f"        r{i} = d[{name!r}]" for i, name in enumerate(names)]
    lines += ["    except KeyError:", "        get = d.get"]
    lines += [f"        r{i} = get({name!r})" for i, name in enumerate(names)]
    pieces: list[str] = []
    sep = "{"
    for i, (name, fn) in enumerate(plan):
        if fn is None:
            lines.append(f"    v = r{i}")
        else:
            namespace[f"_fn{i}"] = fn
            lines.append(f"    v = _fn{i}(model, r{i})")
        # The usual values of a logged message are written inline, one call at most.
        lines += [
            "    t = type(v)",
            "    if v is None:",
            f"        p{i} = 'null'",
            "    elif t is _UUID:",
            "        h = _uuids(id(v))",
            f"        p{i} = h[1] if h is not None and h[0] is v else _uuid_text(v)",
            "    elif t is _str:",
            f"        p{i} = _escape(v) if v.isascii() else _str_text(v)",
            "    elif t is _Proxy:",
            f"        p{i} = v._json or _address_text(v)",
            "    elif t is _datetime:",
            f"        p{i} = '\"' + _datetime_json_text(v) + '\"'",
            "    else:",
            "        w = _writer(t)",
            f"        p{i} = _text(v) if w is None else w(v)",
        ]
        pieces.append(repr(sep + _str_text(name) + ":"))
        pieces.append(f"p{i}")
        sep = ","
    pieces.append(repr(sep + _str_text(MODEL_KEY) + ":" + _str_text(class_path(cls)) + "}"))
    lines.append("    return ''.join((" + ", ".join(pieces) + ",))")
    # Names enter the source only as repr() literals, so no field name can inject code.
    exec("\n".join(lines), namespace)
    write: Callable[[Any], str] = namespace["write"]
    _compiled[cls] = write
    return write
