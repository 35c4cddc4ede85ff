"""Finding and importing the entry points of the ``akgentic`` group.

The group is read once per host (:func:`declared_entry_points`), and the entry
points chosen from that reading are the ones stevedore imports
(:func:`load_extensions`), so nothing is scanned twice and an entry point the
host refused (an impostor of a built-in name) cannot be imported in place of
the one it chose.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Callable

from akgentic.plugins.info import PluginInfo

__all__ = [
    "ENTRY_POINT_GROUP",
    "ESSENTIAL_PLUGINS",
    "KERNEL_DISTRIBUTION",
    "Declared",
    "declared_entry_points",
    "load_extensions",
    "split_env",
    "truthy",
]

ENTRY_POINT_GROUP = "akgentic"
KERNEL_DISTRIBUTION = "akgentic"
#: Built-in plugins the kernel cannot run without; they refuse to be disabled.
ESSENTIAL_PLUGINS = frozenset({"core"})

#: One declared entry point with the record describing it.
Declared = tuple[PluginInfo, importlib.metadata.EntryPoint]

# stevedore memoises entry points per namespace in a class attribute: loading
# seeds it with the chosen entry points, so two hosts loading at once take turns.
_stevedore_lock = threading.Lock()


def split_env(value: str | None) -> list[str]:
    """The names of a comma-separated selection variable."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def truthy(value: str | None) -> bool:
    """Whether a flag variable is on (``1``, ``true``, ``yes``, ``on``)."""
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def declared_entry_points() -> dict[str, list[Declared]]:
    """Entry-point name -> every declaration of it, read once from the installed metadata.

    An entry point of the ``akgentic`` distribution is marked built-in.
    """
    declared: dict[str, list[Declared]] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        dist_name = (dist.metadata["Name"] if dist is not None else "") or ""
        info = PluginInfo(
            name=ep.name,
            distribution=dist_name,
            version=dist.version if dist is not None else "",
            builtin=dist_name.lower() == KERNEL_DISTRIBUTION,
            entry_point=ep.value,
        )
        declared.setdefault(ep.name, []).append((info, ep))
    return declared


def load_extensions(
    selected: list[Declared],
    on_failure: Callable[[object, object, BaseException], None],
) -> list[tuple[str, object]]:
    """Import ``selected`` through stevedore, in their order; ``(name, module)`` of each success.

    An import failure is passed to ``on_failure(manager, entry_point, error)``
    and that entry point is left out.
    """
    from stevedore import ExtensionManager, NamedExtensionManager

    cache = ExtensionManager.ENTRY_POINT_CACHE
    with _stevedore_lock:
        # Hand stevedore the entry points read above instead of letting it scan again;
        # the seeded list is removed once loading is done (the memo is process-wide).
        cache[ENTRY_POINT_GROUP] = [ep for _info, ep in selected]
        try:
            manager: NamedExtensionManager[object] = NamedExtensionManager(
                namespace=ENTRY_POINT_GROUP,
                names=[info.name for info, _ep in selected],
                name_order=True,
                on_load_failure_callback=on_failure,
                on_missing_entrypoints_callback=lambda _names: None,
            )
        finally:
            cache.pop(ENTRY_POINT_GROUP, None)
    return [(extension.name, extension.plugin) for extension in manager.extensions]
