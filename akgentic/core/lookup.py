"""How a contract finds what is installed under a name, without knowing who installed it.

Kernel contracts (tool cards, event stores, vector and sandbox backends, runtimes)
are looked up by name: ``- card: workspace`` in a YAML card, ``postgresql://`` in a
store URL. The thing that answers, a :class:`NameResolver`, is the plugin registry in
practice, but the contracts sit below the plugin system in spirit: they must not be
what the registry is built from *and* what builds it. So the resolver's shape and the
per-thread "current resolver" live here, at the bottom of the kernel, and the plugin
layer implements and installs it.

Likewise, the registry checks that a plugin's record holds the right kind of class
(a ``ToolCard`` subclass for a tool card) without importing that class: the layer that
defines a kind's base class declares it with :func:`declare_kind_base`.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "NameResolver",
    "current_resolver",
    "declare_kind_base",
    "kind_base",
    "use_resolver",
]


@runtime_checkable
class NameResolver(Protocol):
    """Answers "what is installed under this name?" for each kind of contract.

    Each method returns a mapping of registered name to the plugin's record for
    that kind (the plugin layer's typed records). The plugin registry implements it.
    """

    def tool_cards(self) -> Mapping[str, Any]:
        """Tool card records by card name."""
        ...

    def event_stores(self) -> Mapping[str, Any]:
        """Event store records by store name."""
        ...

    def vector_backends(self) -> Mapping[str, Any]:
        """Vector backend records by backend name."""
        ...

    def sandbox_backends(self) -> Mapping[str, Any]:
        """Sandbox backend records by backend name."""
        ...

    def embedders(self) -> Mapping[str, Any]:
        """Embedder records by embedder name."""
        ...

    def agent_classes(self) -> Mapping[str, Any]:
        """Agent class records by class name."""
        ...

    def message_types(self) -> Mapping[str, Any]:
        """Message type records by type name."""
        ...

    def runtimes(self) -> Mapping[str, Any]:
        """Runtime records by runtime name."""
        ...


_current: contextvars.ContextVar[NameResolver | None] = contextvars.ContextVar(
    "akgentic_name_resolver", default=None
)


def current_resolver() -> NameResolver | None:
    """The resolver installed for this thread by the innermost :func:`use_resolver`, if any.

    None means "the process-wide default": the plugin layer then answers with the
    registry of its process-wide host.
    """
    return _current.get()


@contextlib.contextmanager
def use_resolver(resolver: NameResolver) -> Iterator[NameResolver]:
    """Make ``resolver`` the :func:`current_resolver` of this thread inside the block.

    The lookup is a context variable, so a team manager running with its own
    registry does not change what another thread sees.
    """
    token = _current.set(resolver)
    try:
        yield resolver
    finally:
        _current.reset(token)


_bases: dict[str, type] = {}
_bases_lock = threading.Lock()


def declare_kind_base(kind: str, base: type) -> None:
    """Declare ``base`` as the class every record of ``kind`` must name a subclass of.

    Called once by the module that defines the base (``ToolCard`` declares
    ``"tool card"``). Declaring another class for a kind that has one is an error:
    two bases for one kind would make the registry's check depend on import order.
    """
    with _bases_lock:
        known = _bases.get(kind)
        # A module imported anew (importlib.reload) declares its own class again.
        if known is not None and (known.__module__, known.__qualname__) != (
            base.__module__,
            base.__qualname__,
        ):
            raise ValueError(f"kind {kind!r} already has the base class {known.__qualname__}")
        _bases[kind] = base


def kind_base(kind: str) -> type | None:
    """The base class declared for ``kind``; None when its module was never imported.

    A None answer means no subclass of that base can exist in the process either,
    so a record claiming one is wrong.
    """
    return _bases.get(kind)
