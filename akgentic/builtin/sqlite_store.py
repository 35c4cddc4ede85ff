"""The ``sqlite`` built-in plugin: the default event store, ``sqlite:///path/to/akgentic.db``.

Registered through the same entry-point group as any plugin and disabled the same
way (``AKGENTIC_DISABLE_PLUGINS=sqlite``). The store module is imported only
when a store is opened.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from akgentic.plugins import EventStoreSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.team.stores.sqlite import SqliteEventStore


def open_sqlite_store(url: str) -> SqliteEventStore:
    """Open the SQLite store a ``sqlite://`` URL names."""
    from akgentic.team.stores.sqlite import SqliteEventStore

    return SqliteEventStore.from_url(url)


def init_sqlite_store(url: str) -> None:
    """Create the database file and its tables if missing (idempotent)."""
    from akgentic.team.stores.sqlite import SqliteEventStore

    SqliteEventStore.init_url(url)


@hookimpl
def akgentic_event_stores() -> Iterable[EventStoreSpec]:
    """Register the SQLite event store for the ``sqlite`` scheme."""
    return [
        EventStoreSpec(
            name="sqlite",
            description="Event store in one SQLite file (WAL, one transaction per write)",
            schemes=("sqlite",),
            open=open_sqlite_store,
            init=init_sqlite_store,
        )
    ]
