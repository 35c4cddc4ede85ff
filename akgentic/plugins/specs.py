"""Typed records that plugins return from the registration hooks.

Every registration hook returns an iterable of one of these records. Each record
carries a ``name``: the stable, user-facing key under which the thing is found
(in YAML cards, store URLs and stored event logs), so names are never renamed
without keeping an alias. Records are frozen, keyword-only dataclasses so that
fields can be added later without breaking plugins written today.

Records are checked when the registry collects them (:meth:`Spec.check`): a
record whose fields hold the wrong kind of thing (``ToolCardSpec(card=int)``)
makes the plugin that returned it ``failed``, with the reason, instead of
failing later in whatever code first uses the record. This module sits below the
contracts it describes (tool cards, stores, runtimes, console panes), so it never
imports them, not even for type checking: fields that hold a contract's class or
factory are typed loosely, their docstrings name the contract, and the registry
hands :meth:`Spec.check` the kind's base class (declared by the layer that defines
it, through :mod:`akgentic.core.lookup`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from akgentic.core.agent import Akgent

__all__ = [
    "KINDS",
    "AgentClassSpec",
    "ConsolePaneSpec",
    "EmbedderSpec",
    "EventStoreSpec",
    "MessageTypeSpec",
    "RuntimeSpec",
    "SandboxBackendSpec",
    "Spec",
    "ToolCardSpec",
    "VectorBackendSpec",
    "WebRoutesSpec",
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

    def check(self, base: type | None = None) -> None:
        """Check that every field holds the kind of thing it declares.

        The registry calls this on each record a plugin returns, with ``base``, the
        class this kind's records must name a subclass of when the kind has one
        (:func:`akgentic.core.lookup.kind_base`). An error (``TypeError`` or
        ``ValueError``, its message naming the record and the field) marks that
        plugin failed. Subclasses extend it, calling ``super().check(base)`` first.
        """
        if not isinstance(self.description, str):
            raise TypeError(f"{self._label()}: description must be a str, got {self.description!r}")

    def _label(self) -> str:
        return f"{self.kind} {self.name!r}"

    def _check_class(self, field_name: str, value: object, base: type, what: str) -> None:
        if not (isinstance(value, type) and issubclass(value, base)):
            raise TypeError(f"{self._label()}: {field_name} is {value!r}, not a {what} subclass")

    def _check_callable(self, field_name: str, value: object, *, optional: bool = False) -> None:
        if value is None and optional:
            return
        if not callable(value):
            raise TypeError(f"{self._label()}: {field_name} is {value!r}, which is not callable")


@dataclass(frozen=True, kw_only=True)
class ToolCardSpec(Spec):
    """A tool card class, addressable in YAML as ``- card: <name>``.

    ``card`` is a subclass of ``akgentic.tool.ToolCard``. ``import_paths`` lists the
    ``akgentic.tool.<module>`` paths the plugin serves as aliases of the card's
    top-level package (``("akgentic.tool.search",)`` for a card defined in
    ``akgentic_search``), so product-document imports keep working; see
    :mod:`akgentic.tool.aliases`.
    """

    card: type[Any]
    import_paths: tuple[str, ...] = ()
    kind = "tool card"

    def check(self, base: type | None = None) -> None:
        """The card must be a subclass of ``base``, the ``ToolCard`` class.

        Without a base no ``ToolCard`` was ever imported, so no class can be one.
        """
        super().check(base)
        if base is None:
            raise TypeError(f"{self._label()}: card is {self.card!r}, not a ToolCard subclass")
        self._check_class("card", self.card, base, "ToolCard")

    def __post_init__(self) -> None:
        super().__post_init__()
        for path in self.import_paths:
            parts = path.split(".") if isinstance(path, str) else []
            if (
                len(parts) < 3
                or parts[:2] != ["akgentic", "tool"]
                or not all(part.isidentifier() for part in parts)
            ):
                raise ValueError(
                    f"tool card {self.name!r}: import path {path!r} must be a dotted "
                    "module path under 'akgentic.tool.'"
                )


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

    def check(self, base: type | None = None) -> None:
        """Schemes are non-empty strings; ``open`` (and ``init``, when given) are callable."""
        super().check(base)
        schemes: object = self.schemes
        if isinstance(schemes, str) or not all(
            isinstance(scheme, str) and scheme for scheme in self.schemes
        ):
            raise TypeError(
                f"{self._label()}: schemes must be a tuple of non-empty strings, "
                f"got {self.schemes!r}"
            )
        self._check_callable("open", self.open)
        self._check_callable("init", self.init, optional=True)


@dataclass(frozen=True, kw_only=True)
class VectorBackendSpec(Spec):
    """A vector backend named in a vector-store param (``backend: qdrant``).

    ``factory(context)`` builds a backend instance from an
    ``akgentic.vector.BackendContext`` (import optional clients inside it).
    ``persists_in_actor_state`` says the rows live in the ``#VectorStore`` actor
    (the backend then offers ``get_state()``/``restore_state()``); ``needs_actor``
    asks for that actor without any state in it. ``is_configured()`` tells whether
    the environment provisions the backend (it decides the default, highest
    ``default_priority`` first); ``require_configured(owner)`` raises ValueError
    with the fix when it does not. ``distribution`` is what to ``pip install``.
    """

    factory: Callable[..., Any]
    persists_in_actor_state: bool = False
    needs_actor: bool = False
    selectable_as_default: bool = True
    default_priority: int = 0
    is_configured: Callable[[], bool] | None = None
    require_configured: Callable[[str], None] | None = None
    distribution: str = ""
    kind = "vector backend"

    def check(self, base: type | None = None) -> None:
        """The factory must be callable."""
        super().check(base)
        self._check_callable("factory", self.factory)


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

    def check(self, base: type | None = None) -> None:
        """The factory (and ``available``, when given) must be callable."""
        super().check(base)
        self._check_callable("factory", self.factory)
        self._check_callable("available", self.available, optional=True)


@dataclass(frozen=True, kw_only=True)
class EmbedderSpec(Spec):
    """An embedding model provider.

    ``factory(model, dimension, timeout_s)`` builds an ``akgentic.vector.Embedder``.
    ``models`` maps known model names to their width (empty: any model, any width);
    ``dimensions`` is the width used when nothing else says. ``available()`` returns
    None when the embedder can run here, else the reason (it never raises).
    """

    factory: Callable[..., Any]
    dimensions: int | None = None
    models: Mapping[str, int] = field(default_factory=dict)
    default_model: str = ""
    max_batch: int = 256
    max_input_chars: int = 8000
    available: Callable[[], str | None] | None = None
    distribution: str = ""
    kind = "embedder"

    def check(self, base: type | None = None) -> None:
        """The factory must be callable; ``dimensions``, when given, a positive int."""
        super().check(base)
        self._check_callable("factory", self.factory)
        dims = self.dimensions
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise TypeError(f"{self._label()}: dimensions must be a positive int, got {dims!r}")


@dataclass(frozen=True, kw_only=True)
class AgentClassSpec(Spec):
    """An agent (actor) class that team cards may name by ``name``."""

    agent_class: type[Akgent[Any, Any]]
    kind = "agent class"

    def check(self, base: type | None = None) -> None:
        """The class must be an ``Akgent`` subclass (an actor class)."""
        super().check(base)
        from akgentic.core.agent import Akgent

        self._check_class("agent_class", self.agent_class, Akgent, "Akgent")


@dataclass(frozen=True, kw_only=True)
class MessageTypeSpec(Spec):
    """A message, event or stored payload class that may appear in event logs.

    ``message_class`` is a pydantic model: usually a ``Message`` subclass, or a
    payload a message or tool state carries (a vector row, a task). ``aliases``
    lists former dotted class paths, so logs written before a class moved still
    load.
    """

    message_class: type[BaseModel]
    aliases: tuple[str, ...] = field(default=())
    kind = "message type"

    def check(self, base: type | None = None) -> None:
        """The class must be a pydantic model; aliases dotted class paths."""
        super().check(base)
        from pydantic import BaseModel

        self._check_class("message_class", self.message_class, BaseModel, "pydantic BaseModel")
        aliases: object = self.aliases
        if isinstance(aliases, str) or not all(
            isinstance(alias, str) and "." in alias for alias in self.aliases
        ):
            raise TypeError(
                f"{self._label()}: aliases must be a tuple of dotted class paths, "
                f"got {self.aliases!r}"
            )


@dataclass(frozen=True, kw_only=True)
class ConsolePaneSpec(Spec):
    """A pane of the web console (``akgentic serve``) for one tool card.

    ``card`` is the registered name of the tool card the pane belongs to
    (``"skill"``); the pane is offered on the page of every team one of whose
    members carries that card. ``render(source)`` receives a
    :class:`~akgentic.console.panes.PaneSource` (the team's cards of that kind and
    its latest agent states) and returns blocks: mappings with a ``kind`` of
    ``"text"`` (``text``), ``"list"`` (``items``) or ``"table"`` (``columns``,
    ``rows``), ``"graph"`` (``nodes`` with ``id``, ``label``, ``group``, ``text``;
    ``edges`` with ``source``, ``target``, ``label``: drawn and searchable) or
    ``"tree"`` (``items`` with ``key``, ``label``, ``depth``, ``openable``). The
    console renders every value as text, never as markup.

    ``open(source, key)``, optional, answers for one ``openable`` tree item
    (``GET /api/teams/{id}/panes/{name}/item?key=...``) with more blocks; it must
    refuse (``ValueError`` or ``LookupError``) a key it must not show, such as a
    path leaving the pane's tree.

    ``state(source)``, optional, returns the pane's content as plain JSON data
    (dicts, lists, strings, numbers) for protocol adapters that share a team's state
    with a client: AG-UI's ``STATE_SNAPSHOT`` carries it under the pane's name. It
    lets such an adapter show a plugin's data without importing that plugin.
    """

    card: str
    title: str
    render: Callable[[Any], Sequence[Mapping[str, Any]]]
    open: Callable[[Any, str], Sequence[Mapping[str, Any]]] | None = None
    state: Callable[[Any], Any] | None = None
    kind = "console pane"

    def check(self, base: type | None = None) -> None:
        """``card`` and ``title`` are non-empty strings; ``render`` is callable."""
        super().check(base)
        for field_name in ("card", "title"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value.strip():
                raise TypeError(
                    f"{self._label()}: {field_name} must be a non-empty str, got {value!r}"
                )
        self._check_callable("render", self.render)
        self._check_callable("open", self.open, optional=True)
        self._check_callable("state", self.state, optional=True)


@dataclass(frozen=True, kw_only=True)
class RuntimeSpec(Spec):
    """A runtime (where teams run) selected by the scheme of a cluster URL.

    ``schemes`` lists the URL schemes it answers to (``("local",)``,
    ``("nats",)``). ``connect(url, store)`` returns a ready
    :class:`~akgentic.cluster.client.RuntimeClient`; ``store`` is the event
    store URL the caller was given (``None``: the runtime's default), which an
    in-process runtime opens and a remote one may ignore. ``init(url)``, when
    given, creates what the runtime needs (streams, buckets) idempotently
    (``akgentic cluster init``); ``status(url)``, when given, describes the
    fleet as JSON-ready data (``akgentic cluster status``). ``in_process`` is
    true for a runtime whose teams run inside the calling process on the store
    it is given (the built-in ``local``): the ``team`` commands then run a team
    for the command's duration, as without ``--cluster``, and check that the
    store a read-only command names exists before connecting.
    """

    schemes: tuple[str, ...]
    connect: Callable[[str, str | None], Any]
    init: Callable[[str], None] | None = None
    status: Callable[[str], dict[str, Any]] | None = None
    in_process: bool = False
    kind = "runtime"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.schemes:
            raise ValueError(f"runtime {self.name!r} declares no URL scheme")

    def check(self, base: type | None = None) -> None:
        """Schemes are non-empty strings; ``connect`` (and ``init``, when given) are callable."""
        super().check(base)
        schemes: object = self.schemes
        if isinstance(schemes, str) or not all(
            isinstance(scheme, str) and scheme for scheme in self.schemes
        ):
            raise TypeError(
                f"{self._label()}: schemes must be a tuple of non-empty strings, "
                f"got {self.schemes!r}"
            )
        self._check_callable("connect", self.connect)
        if not isinstance(self.in_process, bool):
            raise TypeError(f"{self._label()}: in_process must be a bool, got {self.in_process!r}")
        for name in ("init", "status"):
            value = getattr(self, name)
            if value is not None:
                self._check_callable(name, value)


#: What a web-routes prefix may be: one lowercase path segment.
_PREFIX = re.compile(r"^/[a-z0-9][a-z0-9_-]*$")
#: Paths of the console itself, which no plugin may take over.
RESERVED_PREFIXES = frozenset({"/api", "/static"})


@dataclass(frozen=True, kw_only=True)
class WebRoutesSpec(Spec):
    """Routes a plugin serves from the server of ``akgentic serve``, under ``prefix``.

    ``prefix`` is one lowercase path segment (``"/a2a"``); ``/api`` and ``/static``
    belong to the console. ``build(service)`` receives the server's
    :class:`~akgentic.console.service.ConsoleService` (its teams, their runtimes,
    stored events and questions) and returns an ASGI application, typically a
    Starlette or FastAPI app, mounted at ``prefix``: a request for
    ``/a2a/{team_id}/...`` reaches it with the path ``/{team_id}/...``. The
    console's access rules (the token, the Host and Origin checks, the security
    headers) wrap it unchanged; the mounted app's lifespan does not run, so it
    opens what it needs on first use. ``build`` runs once, when the server starts.
    """

    prefix: str
    build: Callable[[Any], Any]
    kind = "web routes"

    def check(self, base: type | None = None) -> None:
        """``prefix`` is one free lowercase path segment; ``build`` is callable."""
        super().check(base)
        if not isinstance(self.prefix, str) or not _PREFIX.match(self.prefix):
            raise ValueError(
                f"{self._label()}: prefix must be one lowercase path segment such as "
                f"'/a2a', got {self.prefix!r}"
            )
        if self.prefix in RESERVED_PREFIXES:
            raise ValueError(f"{self._label()}: prefix {self.prefix} belongs to the console")
        self._check_callable("build", self.build)


#: Registry kind key -> (hook name, record type). The order is the display order.
KINDS: dict[str, tuple[str, type[Spec]]] = {
    "tool_cards": ("akgentic_tool_cards", ToolCardSpec),
    "event_stores": ("akgentic_event_stores", EventStoreSpec),
    "vector_backends": ("akgentic_vector_backends", VectorBackendSpec),
    "sandbox_backends": ("akgentic_sandbox_backends", SandboxBackendSpec),
    "embedders": ("akgentic_embedders", EmbedderSpec),
    "agent_classes": ("akgentic_agent_classes", AgentClassSpec),
    "message_types": ("akgentic_message_types", MessageTypeSpec),
    "console_panes": ("akgentic_console_panes", ConsolePaneSpec),
    "runtimes": ("akgentic_runtimes", RuntimeSpec),
    "web_routes": ("akgentic_web_routes", WebRoutesSpec),
}
