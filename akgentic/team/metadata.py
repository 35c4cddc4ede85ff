"""Typed business metadata of a team and the index entries derived from it.

A team card may declare a ``metadata_type``: a :class:`TeamMetadata` subclass
whose fields describe the business context of each team built from the card
(tenant, case reference, channel...). Fields marked
``Field(json_schema_extra={"indexed": True})`` become filterable: every time a
team is written, each marked field that has a value is flattened into one
``"key|value"`` string of ``Process.metadata_indexes``, and
``EventStore.list_teams(metadata={...})`` matches those strings exactly.

Both sides go through :func:`make_index_entry`, so a filter and a stored entry
are always rendered the same way. ``|`` and ``\\`` are escaped inside keys and
values, which makes the encoding injective: no value can forge a second entry.

Apart from the business metadata, a team record carries its :class:`Lineage`:
the team and sequence it was forked from, the name it was given, and, for a
branch a rewind left behind, the team that took its place (see
``docs/time-travel.md``).
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, ClassVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = [
    "INDEXED_SCALARS",
    "Lineage",
    "TeamMetadata",
    "derive_metadata_indexes",
    "indexed_fields",
    "make_index_entry",
    "metadata_filter_entries",
    "render_index_value",
]

#: Annotations an indexed field may carry (optionally ``| None``); Enum subclasses too.
INDEXED_SCALARS: tuple[type, ...] = (str, bool, int, UUID, date, datetime)

_SEPARATOR = "|"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(_SEPARATOR, "\\" + _SEPARATOR)


def render_index_value(value: object) -> str:
    """The string a metadata value is indexed (and filtered) as.

    ``bool`` renders as ``true``/``false``, an Enum as its value, dates and
    datetimes in ISO form, everything else through ``str``.
    """
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date | datetime):
        return value.isoformat()
    return str(value)


def make_index_entry(key: str, value: object) -> str:
    """One ``key|value`` index entry, with ``|`` and ``\\`` escaped on both sides."""
    return f"{_escape(key)}{_SEPARATOR}{_escape(render_index_value(value))}"


def _is_indexed(extra: object) -> bool:
    return isinstance(extra, Mapping) and extra.get("indexed") is True


def indexed_fields(model_type: type[SerializableBaseModel]) -> tuple[str, ...]:
    """Names of the fields of ``model_type`` marked ``indexed``, in declaration order."""
    return tuple(
        name
        for name, info in model_type.model_fields.items()
        if _is_indexed(info.json_schema_extra)
    )


def derive_metadata_indexes(metadata: SerializableBaseModel | None) -> list[str]:
    """The index entries of a metadata value (``[]`` for ``None``).

    Only fields marked ``indexed`` contribute; a field whose value is ``None``
    contributes nothing (absent is not the empty string).
    """
    if metadata is None:
        return []
    entries: list[str] = []
    for name in indexed_fields(type(metadata)):
        value = getattr(metadata, name)
        if value is not None:
            entries.append(make_index_entry(name, value))
    return entries


def metadata_filter_entries(metadata: Mapping[str, object] | None) -> list[str]:
    """The index entries a ``list_teams(metadata=...)`` filter must all match."""
    if not metadata:
        return []
    return sorted({make_index_entry(str(key), value) for key, value in metadata.items()})


def _scalar_ok(annotation: object) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, enum.Enum) or annotation in INDEXED_SCALARS
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return len(args) == 1 and _scalar_ok(args[0])
    return False


class TeamMetadata(SerializableBaseModel):
    """Base class of a team's typed business metadata.

    Subclass it, mark the fields to filter on with
    ``Field(json_schema_extra={"indexed": True})`` and name the subclass in
    ``TeamCard.metadata_type``. Marked fields must be scalars (``str``,
    ``bool``, ``int``, ``UUID``, an ``Enum``, ``date`` or ``datetime``,
    optionally ``| None``); marking anything else raises ``TypeError`` when the
    class is defined. Give every nullable field a ``None`` default. Unknown keys
    are rejected.
    """

    model_config = ConfigDict(extra="forbid")

    indexed: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for name, info in cls.model_fields.items():
            if _is_indexed(info.json_schema_extra) and not _scalar_ok(info.annotation):
                shown = getattr(info.annotation, "__name__", None) or repr(info.annotation)
                if typing.get_args(info.annotation):
                    shown = repr(info.annotation).replace("typing.", "")
                raise TypeError(
                    f"{cls.__name__}.{name} is marked indexed but is annotated {shown}. "
                    "Indexed fields must be str, bool, int, UUID, Enum, date or datetime "
                    "(optionally '| None')."
                )
        cls.indexed = indexed_fields(cls)


class Lineage(BaseModel):
    """Where a team comes from in time: the fork point, its own name, and abandonment.

    ``parent_id`` and ``parent_sequence`` name the team and the last event of
    it the team was forked from (both ``None`` for a team that was created).
    ``name`` is the team's own name (``fork --name``, or the name a rewind took
    over), shown instead of its card's name. ``abandoned_for`` is set on a team
    a rewind replaced: the id of the fork that now carries its name; the
    abandoned team's events stay readable and it can still be resumed.
    ``rewind`` tells a fork made by ``rewind`` from one made by ``fork``.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    parent_id: UUID | None = None
    parent_sequence: int | None = Field(default=None, ge=1)
    name: str | None = None
    abandoned_for: UUID | None = None
    rewind: bool = False

    def describe(self) -> str:
        """One short line: ``fork of 1a2b3c4d @ 12``, ``abandoned for 5e6f7a8b``, or ``""``."""
        parts = []
        if self.parent_id is not None:
            verb = "rewind of" if self.rewind else "fork of"
            parts.append(f"{verb} {str(self.parent_id)[:8]} @ {self.parent_sequence}")
        if self.abandoned_for is not None:
            parts.append(f"abandoned for {str(self.abandoned_for)[:8]}")
        return ", ".join(parts)
