"""The event stores shipped with the kernel (registered as the ``sqlite`` and ``yaml`` plugins).

Modules are imported on first use, so importing this package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.team.stores.sqlite import SqliteEventStore
    from akgentic.team.stores.yaml import YamlEventStore

__all__ = ["SqliteEventStore", "YamlEventStore"]

_LAZY = {
    "SqliteEventStore": "akgentic.team.stores.sqlite",
    "YamlEventStore": "akgentic.team.stores.yaml",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
