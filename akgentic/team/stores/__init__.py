"""The event stores shipped with the kernel, and the base every store is built on.

:class:`StoreBase` (``akgentic.team.stores.base``) implements the
:class:`~akgentic.team.store.EventStore` protocol once over a few driver
primitives; the ``sqlite`` and ``yaml`` plugins and the PostgreSQL and MongoDB
store plugins are drivers of it. Modules are imported on first use, so
importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.team.stores.base import Decide, Payload, StoreBase, indexed, repeated_event
    from akgentic.team.stores.claims import LockFileClaims, LockFileHolds
    from akgentic.team.stores.sqlite import SqliteEventStore
    from akgentic.team.stores.yaml import YamlEventStore

__all__ = [
    "Decide",
    "LockFileClaims",
    "LockFileHolds",
    "Payload",
    "SqliteEventStore",
    "StoreBase",
    "YamlEventStore",
    "indexed",
    "repeated_event",
]

_LAZY = {
    "Decide": "akgentic.team.stores.base",
    "LockFileClaims": "akgentic.team.stores.claims",
    "LockFileHolds": "akgentic.team.stores.claims",
    "Payload": "akgentic.team.stores.base",
    "SqliteEventStore": "akgentic.team.stores.sqlite",
    "StoreBase": "akgentic.team.stores.base",
    "YamlEventStore": "akgentic.team.stores.yaml",
    "indexed": "akgentic.team.stores.base",
    "repeated_event": "akgentic.team.stores.base",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
