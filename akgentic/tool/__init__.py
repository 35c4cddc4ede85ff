"""ToolCard contracts: how capabilities are declared, wired and served to agents.

This package root is the stable surface for card authors: everything in
:mod:`akgentic.tool.core` is re-exported here. Concrete cards are plugins; their
classes are reachable here too, lazily: ``from akgentic.tool import ShoutTool`` asks
the plugin registry for a card whose class (or registered name) is ``ShoutTool`` and
raises an ImportError naming the distribution to install when none is.

Importing the package also installs the seed-import-path finder
(:mod:`akgentic.tool.aliases`): ``from akgentic.tool.search import SearchTool``
resolves to the plugin package that declares the path. Installing it runs no plugin
discovery; only an import of such a path does.

Every name is resolved on first use (the card-author surface from the module that
defines it, a card from the registry), so ``import akgentic.tool`` loads neither
pydantic nor the actor runtime nor any plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from akgentic.tool import core as _core
from akgentic.tool.aliases import install_alias_finder
from akgentic.tool.lazy import CardNotInstalledError, resolve_card_attribute

if TYPE_CHECKING:
    from akgentic.tool.core import *  # noqa: F403 - the card-author surface, re-exported whole

install_alias_finder()

__all__ = ["CardNotInstalledError"]
__all__ += _core.__all__

_SURFACE = frozenset(_core.__all__)


def __getattr__(name: str) -> Any:
    """The card-author surface from its module, else a registered card class or name."""
    if name in _SURFACE:
        value = getattr(_core, name)
        globals()[name] = value
        return value
    return resolve_card_attribute(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SURFACE)
