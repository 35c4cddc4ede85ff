"""The ``postgres`` plugin: the ``postgresql://`` / ``postgres://`` event store.

The store module (and with it psycopg) is imported only when a store is opened
or initialised.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from akgentic.plugin_api import DriverModule, EventStoreSpec, hookimpl

if TYPE_CHECKING:
    from akgentic_postgres.store import PostgresEventStore

_DRIVER = DriverModule(
    "akgentic_postgres.store",
    (
        "the PostgreSQL event store needs psycopg 3 and psycopg_pool: "
        'pip install "psycopg[binary]" psycopg_pool (or pip install akgentic-postgres)'
    ),
)


def open_postgres_store(url: str) -> PostgresEventStore:
    """Open the store a ``postgresql://`` URL names (its database must be initialised)."""
    store_class: type[PostgresEventStore] = _DRIVER.attribute("PostgresEventStore")
    return store_class.from_url(url)


def init_postgres_store(url: str) -> None:
    """Create the tables and indexes the URL names if missing (idempotent)."""
    _DRIVER.attribute("init_schema")(url)


@hookimpl
def akgentic_event_stores() -> Iterable[EventStoreSpec]:
    """Register the PostgreSQL store for the ``postgresql`` and ``postgres`` schemes."""
    return [
        EventStoreSpec(
            name="postgres",
            description="Event store in PostgreSQL (JSONB payloads, GIN metadata index, pooled)",
            schemes=("postgresql", "postgres"),
            open=open_postgres_store,
            init=init_postgres_store,
        )
    ]
