"""Lazy access to plugin-provided cards from the ``akgentic.tool`` package root."""

from __future__ import annotations

import importlib.util
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from akgentic.tool.core.card import ToolCard

__all__ = ["CardNotInstalledError", "card_name_from_class_name", "resolve_card_attribute"]

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


class CardNotInstalledError(ImportError):
    """No installed plugin provides the card asked for at the package root.

    Raised for class-like names (``from akgentic.tool import WorkspaceTool``) so the
    message says what to install; other unknown names get a plain AttributeError.
    """


def card_name_from_class_name(class_name: str) -> str:
    """Guess the registered name of a card from its class name.

    ``WorkspaceTool`` -> ``workspace``, ``KnowledgeGraphTool`` -> ``knowledge_graph``,
    ``MCPTool`` -> ``mcp``.
    """
    stem = class_name.removesuffix("Tool") or class_name
    return _CAMEL_BOUNDARY.sub("_", stem).lower()


def _is_submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        return False


def resolve_card_attribute(package: str, name: str) -> type[ToolCard]:
    """The card class a module ``__getattr__`` should return for ``name``.

    Matches a registered card by class name first, then by registered name. Private
    and dunder names and the package's own submodules are never looked up, and a
    lowercase name that is not a registered card is a plain AttributeError, so the
    import system and introspection behave normally.

    Raises:
        CardNotInstalledError: No loaded plugin provides it; the message names the
            distribution to install when the name is a well-known card.
    """
    missing = AttributeError(f"module {package!r} has no attribute {name!r}")
    if name.startswith("_") or not name.isidentifier() or _is_submodule(package, name):
        raise missing

    from akgentic.plugins import PluginError, current_registry
    from akgentic.tool.core.catalog import installed_cards

    registry = current_registry()
    try:
        cards = installed_cards(registry)
    except PluginError as error:
        raise CardNotInstalledError(
            f"cannot import name {name!r} from {package!r}: the plugin registry failed ({error})",
            name=package,
        ) from error
    for card in cards.values():
        if card.__name__ == name:
            return card
    if name in cards:
        return cards[name]
    if not name[0].isupper():
        raise missing

    # The registry's hint comes from akgentic.plugins.known.KNOWN_PROVIDERS, and also
    # says when the providing plugin is installed but disabled or broken, which a bare
    # "pip install" would not fix.
    hint = registry.unknown("tool_cards", card_name_from_class_name(name)).hint
    installed = ", ".join(sorted(card.__name__ for card in cards.values())) or "none"
    message = (
        f"cannot import name {name!r} from {package!r}: no installed plugin provides a "
        f"card of that name (installed cards: {installed})"
    )
    raise CardNotInstalledError(f"{message}. {hint}" if hint else message, name=package)
