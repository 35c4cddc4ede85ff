"""The event stores shipped with the kernel, and the base every store is built on.

:class:`StoreBase` (``akgentic.team.stores.base``) implements the
:class:`~akgentic.team.store.EventStore` protocol once over a few driver
primitives; the ``sqlite`` and ``yaml`` plugins and the PostgreSQL and MongoDB
store plugins are drivers of it. With it, this package exports what a driver
needs from the kernel: the stored JSON codec and the error naming a team's
holder. Modules are imported on first use, so importing this package costs
nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.team.stores.base import Decide, Payload, StoreBase, indexed, repeated_event
    from akgentic.team.stores.claims import LockFileClaims, LockFileHolds, claim_error
    from akgentic.team.stores.codec import (
        decode_event,
        decode_process,
        decode_state,
        encode_event,
        encode_process,
        encode_state,
    )
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
    "claim_error",
    "decode_event",
    "decode_process",
    "decode_state",
    "encode_event",
    "encode_process",
    "encode_state",
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
    "claim_error": "akgentic.team.stores.claims",
    "decode_event": "akgentic.team.stores.codec",
    "decode_process": "akgentic.team.stores.codec",
    "decode_state": "akgentic.team.stores.codec",
    "encode_event": "akgentic.team.stores.codec",
    "encode_process": "akgentic.team.stores.codec",
    "encode_state": "akgentic.team.stores.codec",
    "indexed": "akgentic.team.stores.base",
    "repeated_event": "akgentic.team.stores.base",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
