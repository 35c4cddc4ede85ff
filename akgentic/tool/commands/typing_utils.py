"""Annotation helpers for commands: type names, choices, sequences and coercion.

Command-line values always arrive as text. Each parameter gets one :class:`Coercer`,
built when the command is registered, that turns that text into the declared type.
"""

from __future__ import annotations

import collections.abc
import enum
import types
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from akgentic.tool.commands.rest_of_line import RestOfLineMarker

__all__ = [
    "Coercer",
    "CoercionError",
    "choice_values",
    "contains_pydantic_model",
    "core_type",
    "is_rest_of_line",
    "mentions_rest_of_line",
    "sequence_item",
    "type_name",
]

_SEQUENCE_ORIGINS: Final[frozenset[object]] = frozenset(
    {
        list,
        tuple,
        set,
        frozenset,
        collections.abc.Sequence,
        collections.abc.MutableSequence,
        collections.abc.Set,
        collections.abc.MutableSet,
        collections.abc.Iterable,
        collections.abc.Collection,
    }
)


class CoercionError(ValueError):
    """A command-line value could not be turned into the parameter's type."""


def _is_union(tp: object) -> bool:
    origin = get_origin(tp)
    return origin is Union or origin is types.UnionType


def _strip_annotated(tp: object) -> object:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def core_type(tp: object) -> object:
    """Return ``tp`` without ``Annotated`` wrappers and without a ``None`` option."""
    tp = _strip_annotated(tp)
    if _is_union(tp):
        members = [arg for arg in get_args(tp) if arg is not type(None)]
        if len(members) == 1:
            return _strip_annotated(members[0])
    return tp


def _walk(tp: object) -> collections.abc.Iterator[object]:
    """Yield ``tp`` and every type argument nested inside it (metadata included)."""
    yield tp
    if get_origin(tp) is Annotated:
        yield from _walk(get_args(tp)[0])
        yield from getattr(tp, "__metadata__", ())
        return
    if get_origin(tp) is Literal:
        return
    for arg in get_args(tp):
        yield from _walk(arg)


def contains_pydantic_model(tp: object) -> bool:
    """True when ``tp`` is, or has somewhere inside it, a pydantic model class."""
    return any(isinstance(part, type) and issubclass(part, BaseModel) for part in _walk(tp))


def mentions_rest_of_line(tp: object) -> bool:
    """True when the ``RestOfLine`` marker appears anywhere inside ``tp``."""
    return any(isinstance(part, RestOfLineMarker) for part in _walk(tp))


def is_rest_of_line(tp: object) -> bool:
    """True for exactly ``Annotated[str, REST_OF_LINE]`` (extra metadata allowed)."""
    if get_origin(tp) is not Annotated:
        return False
    base = get_args(tp)[0]
    metadata = getattr(tp, "__metadata__", ())
    return base is str and any(isinstance(item, RestOfLineMarker) for item in metadata)


def sequence_item(tp: object) -> tuple[bool, object | None]:
    """Classify a core type as a sequence.

    Returns ``(is_sequence, item_type)``; ``item_type`` is None for fixed-length
    tuples and unparameterised collections, whose items are left as text.
    """
    origin = get_origin(tp)
    if origin is None:
        if tp in (list, tuple, set, frozenset):
            return True, None
        return False, None
    if origin not in _SEQUENCE_ORIGINS:
        return False, None
    args = get_args(tp)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return True, core_type(args[0])
        return True, None
    return True, core_type(args[0]) if args else None


def _choice_map(tp: object) -> dict[str, object] | None:
    """Map every accepted spelling to its value for ``Literal`` and ``Enum`` types."""
    if get_origin(tp) is Literal:
        return {str(value): value for value in get_args(tp)}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        mapping: dict[str, object] = {}
        for member in tp:
            mapping.setdefault(str(member.value), member)
            mapping.setdefault(member.name, member)
        return mapping
    return None


def choice_values(tp: object) -> list[str] | None:
    """Advertised choices of a parameter type (of its items, for sequences)."""
    core = core_type(tp)
    is_sequence, item = sequence_item(core)
    target = item if is_sequence else core
    if get_origin(target) is Literal:
        return [str(value) for value in get_args(target)]
    if isinstance(target, type) and issubclass(target, enum.Enum):
        return [str(member.value) for member in target]
    return None


def type_name(tp: object) -> str:
    """Readable name of an annotation: ``int``, ``list[str]``, ``str | None`` ..."""
    if get_origin(tp) is Annotated:
        return type_name(get_args(tp)[0])
    if tp is type(None) or tp is None:
        return "None"
    if tp is Ellipsis:
        return "..."
    if _is_union(tp):
        return " | ".join(type_name(arg) for arg in get_args(tp))
    origin = get_origin(tp)
    if origin is Literal:
        return "Literal[" + ", ".join(repr(value) for value in get_args(tp)) + "]"
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        args = get_args(tp)
        if not args:
            return str(name)
        return f"{name}[{', '.join(type_name(arg) for arg in args)}]"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _short_errors(error: ValidationError) -> str:
    return "; ".join(str(detail["msg"]) for detail in error.errors())


class Coercer:
    """Turns the text of one command-line value into a parameter's declared type.

    Scalars are validated in pydantic's lax mode (so ``"3"`` becomes ``3`` and
    ``"yes"`` becomes ``True``). ``Literal`` and ``Enum`` values are matched against
    their spelled-out choices first (an enum also accepts its member names).
    Sequences accept either comma-separated items (``a,b,c``; blanks dropped) or a
    JSON array when the text starts with ``[``.
    """

    def __init__(self, annotation: Any) -> None:  # any type form Python allows
        self._adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        core = core_type(annotation)
        self.is_sequence, item = sequence_item(core)
        self._choices = _choice_map(item if self.is_sequence else core)
        self._advertised = choice_values(annotation)

    def _choose(self, raw: str) -> object:
        if self._choices is None:
            return raw
        try:
            return self._choices[raw]
        except KeyError:
            accepted = ", ".join(self._advertised or self._choices)
            raise CoercionError(f"expected one of: {accepted}") from None

    def coerce(self, raw: str) -> object:
        """Return ``raw`` converted to the declared type or raise :class:`CoercionError`."""
        try:
            if self.is_sequence and raw.lstrip().startswith("["):
                return self._adapter.validate_json(raw)
            value: object
            if self.is_sequence:
                items = [part.strip() for part in raw.split(",")]
                value = [self._choose(part) for part in items if part]
            else:
                value = self._choose(raw)
            return self._adapter.validate_python(value)
        except ValidationError as error:
            raise CoercionError(_short_errors(error)) from None
