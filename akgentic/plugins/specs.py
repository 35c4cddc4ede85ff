"""Typed records that plugins return from the registration hooks.

Every registration hook returns an iterable of one of these records. Each record
carries a ``name``: the stable, user-facing key under which the thing is found
(in YAML cards, store URLs and stored event logs), so names are never renamed
without keeping an alias. Records are frozen, keyword-only dataclasses so that
fields can be added later without breaking plugins written today.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "KINDS",
    "AgentClassSpec",
    "EmbedderSpec",
    "EventStoreSpec",
    "MessageTypeSpec",
    "SandboxBackendSpec",
    "Spec",
    "ToolCardSpec",
    "VectorBackendSpec",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def _check_name(kind: str, name: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"invalid {kind} name {name!r}: use letters, digits, '_', '.', '+' or '-', "
            "starting with a letter or digit"
        )


@dataclass(frozen=True, kw_only=True)
class Spec:
    """Base of every registration record: a named thing a plugin contributes."""

    name: str
    description: str = ""

    kind: ClassVar[str] = "thing"

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name)


@dataclass(frozen=True, kw_only=True)
class ToolCardSpec(Spec):
    """A tool card class, addressable in YAML as ``- card: <name>``.

    ``card`` is a subclass of ``akgentic.tool.ToolCard``.
    """

    card: type[Any]
    kind = "tool card"


@dataclass(frozen=True, kw_only=True)
class EventStoreSpec(Spec):
    """An event store selected by URL scheme.

    ``schemes`` lists the URL schemes this store answers to (``("sqlite",)``,
    ``("postgresql", "postgres")``). ``open(url)`` returns a ready store;
    ``init(url)``, when given, creates the schema idempotently (used by
    ``akgentic store init``).
    """

    schemes: tuple[str, ...]
    open: Callable[[str], Any]
    init: Callable[[str], None] | None = None
    kind = "event store"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.schemes:
            raise ValueError(f"event store {self.name!r} declares no URL scheme")


@dataclass(frozen=True, kw_only=True)
class VectorBackendSpec(Spec):
    """A vector backend named in a vector-store param (``backend: qdrant``).

    ``factory(**options)`` builds a backend instance.
    """

    factory: Callable[..., Any]
    kind = "vector backend"


@dataclass(frozen=True, kw_only=True)
class SandboxBackendSpec(Spec):
    """A sandbox (command execution) backend (contract: :mod:`akgentic.sandbox`).

    ``factory()`` builds an unprepared backend. ``available()``, when given,
    says whether the backend can run on this machine and must never raise:
    ``None`` (or ``True``) means usable, a string is the reason it is not (a
    missing ``bwrap`` binary, no Docker engine). ``install_hint`` tells a user
    what to install when it is missing; ``isolation`` says in a few words what
    it isolates (shown by ``akgentic sandbox check``).
    """

    factory: Callable[..., Any]
    available: Callable[[], str | bool | None] | None = None
    install_hint: str = ""
    isolation: str = ""
    kind = "sandbox backend"


@dataclass(frozen=True, kw_only=True)
class EmbedderSpec(Spec):
    """An embedding model provider; ``factory(**options)`` builds an embedder."""

    factory: Callable[..., Any]
    dimensions: int | None = None
    kind = "embedder"


@dataclass(frozen=True, kw_only=True)
class AgentClassSpec(Spec):
    """An agent (actor) class that team cards may name by ``name``."""

    agent_class: type[Any]
    kind = "agent class"


@dataclass(frozen=True, kw_only=True)
class MessageTypeSpec(Spec):
    """A message or event class that may appear in stored event logs.

    ``aliases`` lists former dotted class paths, so logs written before a class
    moved still load.
    """

    message_class: type[Any]
    aliases: tuple[str, ...] = field(default=())
    kind = "message type"


#: Registry kind key -> (hook name, record type). The order is the display order.
KINDS: dict[str, tuple[str, type[Spec]]] = {
    "tool_cards": ("akgentic_tool_cards", ToolCardSpec),
    "event_stores": ("akgentic_event_stores", EventStoreSpec),
    "vector_backends": ("akgentic_vector_backends", VectorBackendSpec),
    "sandbox_backends": ("akgentic_sandbox_backends", SandboxBackendSpec),
    "embedders": ("akgentic_embedders", EmbedderSpec),
    "agent_classes": ("akgentic_agent_classes", AgentClassSpec),
    "message_types": ("akgentic_message_types", MessageTypeSpec),
}
