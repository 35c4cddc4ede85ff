"""Seed import paths: ``akgentic.tool.<module>`` served by plugin packages.

The product documents import cards from ``akgentic.tool.search``,
``akgentic.tool.skill``... In this edition those cards live in plugin packages
(``akgentic_search``). A plugin lists the paths it serves in its
:class:`~akgentic.plugins.ToolCardSpec` (``import_paths``); the meta-path finder
installed here resolves an import of such a path to the plugin's own module object,
so ``akgentic.tool.search.SearchTool is akgentic_search.SearchTool``.

Rules:

- Importing :mod:`akgentic.tool` installs the finder and runs no discovery; the
  registry is read only when an import names a path that no real module provides.
- Real kernel modules (``akgentic.tool.core``, ``.team``, ``.mailbox``, ``.model``,
  ...) are never shadowed: the finder steps aside for any name whose first
  component below ``akgentic.tool`` exists in the kernel package. A plugin naming a
  kernel module path is served through :func:`forward_attribute` instead (the kernel
  module's ``__getattr__`` forwards missing names to the plugin).
- A well-known path whose plugin is absent, disabled or broken raises
  :class:`AliasNotInstalledError` naming the distribution.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import importlib.abc

__all__ = [
    "ALIAS_ROOT",
    "AliasNotInstalledError",
    "SeedAliasFinder",
    "forward_attribute",
    "install_alias_finder",
    "served_paths",
]

ALIAS_ROOT = "akgentic.tool"
_PREFIX = ALIAS_ROOT + "."


class AliasNotInstalledError(ModuleNotFoundError):
    """An ``akgentic.tool.<module>`` path whose serving plugin is not available."""


_kernel_children: frozenset[str] | None = None
_lock = threading.Lock()


def _kernel_modules() -> frozenset[str]:
    """Names of the real modules and packages directly under ``akgentic.tool``."""
    global _kernel_children
    if _kernel_children is None:
        import pkgutil

        package = sys.modules.get(ALIAS_ROOT)
        paths: Sequence[str] = getattr(package, "__path__", None) or []
        _kernel_children = frozenset(info.name for info in pkgutil.iter_modules(paths))
    return _kernel_children


def served_paths() -> dict[str, str]:
    """Alias path -> target module name, from every loaded plugin's card records.

    The target of a path is the top-level package of the card class's module
    (``akgentic_search`` for ``akgentic_search.cards.SearchTool``).
    """
    from akgentic.plugins import get_registry

    served: dict[str, str] = {}
    for spec in get_registry().tool_cards().values():
        target = getattr(spec.card, "__module__", "").partition(".")[0]
        for path in spec.import_paths:
            if target:
                served.setdefault(path, target)
    return served


def _well_known_card(path: str) -> str | None:
    """The card name an absent path most likely belongs to, when it is a known one."""
    from akgentic.plugins.known import KNOWN_PROVIDERS

    name = path.removeprefix(_PREFIX).split(".")[0]
    return name if name in KNOWN_PROVIDERS["tool_cards"] else None


def _not_installed(path: str, card_name: str) -> AliasNotInstalledError:
    from akgentic.plugins import get_registry

    hint = get_registry().unknown("tool_cards", card_name).hint
    message = f"no module named {path!r}: no enabled plugin serves this import path"
    return AliasNotInstalledError(f"{message}. {hint}" if hint else message, name=path)


# The finder and loader implement the import protocols without deriving from
# importlib.abc: that module pulls in importlib.resources, tempfile and more, a
# noticeable share of what ``import akgentic.tool`` would otherwise cost.


class _AliasLoader:
    """Puts the target module itself in ``sys.modules`` under the alias name."""

    def __init__(self, target: str) -> None:
        self._target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a placeholder; exec_module swaps in the real module

    def exec_module(self, module: ModuleType) -> None:
        # The import system returns whatever sys.modules holds under the name once
        # exec_module is done, so the placeholder is replaced by the target object
        # and the target keeps its own __name__ and __spec__.
        sys.modules[module.__name__] = importlib.import_module(self._target)


class SeedAliasFinder:
    """Meta-path finder resolving ``akgentic.tool.<alias>[.<sub>]`` to plugin modules."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        child = fullname[len(_PREFIX) :].split(".")[0]
        if child in _kernel_modules():
            return None
        from akgentic.plugins import PluginError

        try:
            served = served_paths()
        except PluginError as error:
            raise AliasNotInstalledError(
                f"no module named {fullname!r}: the plugin registry failed ({error})",
                name=fullname,
            ) from error
        for alias in sorted(served, key=len, reverse=True):
            if fullname == alias or fullname.startswith(alias + "."):
                module = served[alias] + fullname[len(alias) :]
                loader = cast("importlib.abc.Loader", _AliasLoader(module))
                return importlib.machinery.ModuleSpec(fullname, loader)
        card_name = _well_known_card(fullname)
        if card_name is not None and fullname.count(".") == 2:
            raise _not_installed(fullname, card_name)
        return None


_finder = SeedAliasFinder()


def install_alias_finder() -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent; no discovery).

    First, because a submodule of an alias (``akgentic.tool.search.params``) would
    otherwise be found by the path finder through the target package's ``__path__``
    and loaded a second time under the alias name, with classes of its own.
    """
    with _lock:
        if not any(isinstance(finder, SeedAliasFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _finder)


def forward_attribute(module_name: str, name: str) -> Any:
    """A kernel module's ``__getattr__`` fallback: ``name`` from a plugin serving it.

    For a path that is a real kernel module (``akgentic.tool.model``), plugins that
    declare it in ``import_paths`` extend it: a name the kernel module lacks is read
    from the plugin's package. Private names are never looked up.

    Raises:
        AttributeError: No serving plugin has the name (the import system turns it
            into ``cannot import name``).
        CardNotInstalledError: A class-like name and no enabled plugin serves the
            path, though a well-known one would.
    """
    missing = AttributeError(f"module {module_name!r} has no attribute {name!r}")
    if name.startswith("_"):
        raise missing
    target = served_paths().get(module_name)
    if target is not None:
        module = importlib.import_module(target)
        if hasattr(module, name):
            return getattr(module, name)
        raise missing
    card_name = _well_known_card(module_name)
    if card_name is None or not name[:1].isupper():
        raise missing
    from akgentic.plugins import get_registry
    from akgentic.tool.lazy import CardNotInstalledError

    hint = get_registry().unknown("tool_cards", card_name).hint
    message = f"cannot import name {name!r} from {module_name!r}: no enabled plugin serves it"
    raise CardNotInstalledError(f"{message}. {hint}" if hint else message, name=module_name)
