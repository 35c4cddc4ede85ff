"""Turn the class references of a team card (dotted paths, registered names) into classes.

A YAML card may name an agent class or a message type three ways: a dotted
``module.Class`` path, a ``{"__type__": "module.Class"}`` tag (what a dumped card
contains), or a name registered by a plugin through ``akgentic_agent_classes``
/ ``akgentic_message_types`` (message types also answer to their ``aliases``).
The plugin registry is only consulted when an import cannot answer, so loading a
card written with dotted paths never triggers plugin discovery. Every function
takes the registry to consult (``registry=``), defaulting to
:func:`akgentic.plugins.current_registry`.

The ``aliases`` also answer for stored payloads, explicitly: the store codec
hands :func:`message_type_resolver` to the serializer for the duration of each
decode (:func:`~akgentic.core.utils.serializer.resolving_moved_classes`), so an
event logged while a message class lived at a former path still loads, and
importing this module registers nothing anywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from akgentic.core.utils.serializer import TYPE_KEY, UnresolvableClassError, import_class

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry

__all__ = [
    "message_type_resolver",
    "moved_message_type",
    "resolve_agent_class",
    "resolve_class",
    "resolve_message_type",
    "resolve_metadata_type",
]

logger = logging.getLogger(__name__)


def _registry(registry: PluginRegistry | None) -> PluginRegistry:
    if registry is not None:
        return registry
    from akgentic.plugins import current_registry

    return current_registry()


def _registered_agent_class(name: str, registry: PluginRegistry | None = None) -> type | None:
    spec = _registry(registry).agent_classes().get(name)
    return None if spec is None else spec.agent_class


def _registered_message_type(name: str, registry: PluginRegistry | None = None) -> type | None:
    specs = _registry(registry).message_types()
    spec = specs.get(name)
    if spec is not None:
        return spec.message_class
    for candidate in specs.values():
        if name in candidate.aliases:
            return candidate.message_class
    return None


def moved_message_type(path: str, registry: PluginRegistry | None = None) -> type | None:
    """The registered message type whose former class paths (``aliases``) include ``path``."""
    try:
        specs = _registry(registry).message_types()
    except Exception:
        # The caller then reports the stale path as unresolvable, which replay
        # tolerates for list elements; a plugin problem must not turn it into another error.
        logger.warning("message type aliases unavailable while resolving %r", path, exc_info=True)
        return None
    for spec in specs.values():
        if path in spec.aliases:
            return spec.message_class
    return None


def message_type_resolver(registry: PluginRegistry | None = None) -> Callable[[str], type | None]:
    """A moved-class resolver for the serializer, answering from ``registry``'s aliases.

    Without a registry it asks whichever registry is current when it is called.
    """

    def resolve(path: str) -> type | None:
        return moved_message_type(path, registry)

    return resolve


def _registered_names(kind: str, registry: PluginRegistry | None = None) -> list[str]:
    found = _registry(registry)
    specs = found.agent_classes() if kind == "agent class" else found.message_types()
    return sorted(specs)


def resolve_class(
    value: object,
    kind: str,
    lookup: Callable[[str], type | None] | None = None,
    registry: PluginRegistry | None = None,
) -> type:
    """Resolve ``value`` (a class, a dotted path, a ``__type__`` tag or a registered name).

    Raises ``ValueError`` with a message saying what was tried and, for an
    unknown registered name, which names are available.
    """
    if isinstance(value, type):
        return value
    if isinstance(value, dict) and set(value) == {TYPE_KEY}:
        value = value[TYPE_KEY]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(
            f"{kind} must be a class, a dotted 'module.Class' path or a registered name, "
            f"got {value!r}"
        )
    name = value.strip()
    import_error: Exception | None = None
    if "." in name:
        try:
            found: Any = import_class(name)
        except (UnresolvableClassError, ImportError) as exc:
            import_error = exc
        else:
            if not isinstance(found, type):
                raise ValueError(f"{kind} {name!r} names {type(found).__name__}, not a class")
            return found
    if lookup is not None:
        registered = lookup(name)
        if registered is not None:
            return registered
    if import_error is not None:
        raise ValueError(f"cannot import {kind} {name!r}: {import_error}")
    available = _registered_names(kind, registry) if lookup is not None else []
    listed = ", ".join(available) if available else "none"
    raise ValueError(
        f"unknown {kind} {name!r}: not a dotted 'module.Class' path and no installed plugin "
        f"registers that name (registered: {listed})"
    )


def _dotted(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def resolve_agent_class(value: object, registry: PluginRegistry | None = None) -> type:
    """Resolve an agent class reference of a card (see :func:`resolve_class`).

    The class must be an actor class (an ``Akgent`` subclass): anything else, a
    message class for instance, would only fail when the team starts.
    """
    from akgentic.core.agent import Akgent

    def lookup(name: str) -> type | None:
        return _registered_agent_class(name, registry)

    cls = resolve_class(value, "agent class", lookup, registry)
    if not issubclass(cls, Akgent):
        raise ValueError(
            f"agent class {_dotted(cls)} is not an actor class "
            "(an akgentic.core.Akgent subclass such as akgentic.agent.BaseAgent)"
        )
    return cls


def resolve_metadata_type(value: object) -> type:
    """Resolve the ``metadata_type`` of a card: it must be a ``TeamMetadata`` subclass."""
    from akgentic.team.metadata import TeamMetadata

    cls = resolve_class(value, "metadata type")
    if not issubclass(cls, TeamMetadata):
        raise ValueError(
            f"metadata type {_dotted(cls)} is not a TeamMetadata subclass "
            "(subclass akgentic.team.TeamMetadata to declare a team's metadata)"
        )
    return cls


def resolve_message_type(value: object, registry: PluginRegistry | None = None) -> type:
    """Resolve a message type reference of a card (see :func:`resolve_class`)."""
    from akgentic.core.messages.message import Message

    def lookup(name: str) -> type | None:
        return _registered_message_type(name, registry)

    cls = resolve_class(value, "message type", lookup, registry)
    if not issubclass(cls, Message):
        raise ValueError(f"message type {cls.__module__}.{cls.__name__} is not a Message subclass")
    return cls
