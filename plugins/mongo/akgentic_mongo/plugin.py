"""The ``mongo`` plugin: the ``mongodb://`` / ``mongodb+srv://`` event store.

The store module (and with it pymongo) is imported only when a store is opened
or initialised.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from akgentic.plugin_api import DriverModule, EventStoreSpec, hookimpl

if TYPE_CHECKING:
    from akgentic_mongo.store import MongoEventStore

_DRIVER = DriverModule(
    "akgentic_mongo.store",
    "the MongoDB event store needs pymongo: pip install pymongo (or akgentic-mongo)",
)


def open_mongo_store(url: str) -> MongoEventStore:
    """Open the store a ``mongodb://`` URL names (its database must be initialised)."""
    store_class: type[MongoEventStore] = _DRIVER.attribute("MongoEventStore")
    return store_class.from_url(url)


def init_mongo_store(url: str) -> None:
    """Create the collections' indexes if missing (idempotent)."""
    _DRIVER.attribute("init_schema")(url)


@hookimpl
def akgentic_event_stores() -> Iterable[EventStoreSpec]:
    """Register the MongoDB store for the ``mongodb`` and ``mongodb+srv`` schemes."""
    return [
        EventStoreSpec(
            name="mongo",
            description="Event store in MongoDB (majority/journaled writes, multikey metadata)",
            schemes=("mongodb", "mongodb+srv"),
            open=open_mongo_store,
            init=init_mongo_store,
        )
    ]
