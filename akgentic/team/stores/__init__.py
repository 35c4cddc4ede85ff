"""The event stores shipped with the kernel (registered as the ``sqlite`` and ``yaml`` plugins).

Modules are imported on first use, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.team.stores.sqlite import SqliteEventStore
    from akgentic.team.stores.yaml import YamlEventStore

__all__ = ["SqliteEventStore", "YamlEventStore"]

_LAZY = {
    "SqliteEventStore": "akgentic.team.stores.sqlite",
    "YamlEventStore": "akgentic.team.stores.yaml",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
