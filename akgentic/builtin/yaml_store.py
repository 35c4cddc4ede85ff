"""The ``yaml`` built-in plugin: plain-file event store, ``yaml:///path/to/dir``.

Registered through the same entry-point group as any plugin and disabled the same
way (``AKGENTIC_DISABLE_PLUGINS=yaml``). The store module is imported only
when a store is opened.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from akgentic.plugins import EventStoreSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.team.stores.yaml import YamlEventStore


def open_yaml_store(url: str) -> YamlEventStore:
    """Open the YAML store a ``yaml://`` URL names."""
    from akgentic.team.stores.yaml import YamlEventStore

    return YamlEventStore.from_url(url)


def init_yaml_store(url: str) -> None:
    """Create the store's root directory if missing (idempotent)."""
    from akgentic.team.stores.yaml import YamlEventStore

    YamlEventStore.init_url(url)


@hookimpl
def akgentic_event_stores() -> Iterable[EventStoreSpec]:
    """Register the YAML event store for the ``yaml`` scheme."""
    return [
        EventStoreSpec(
            name="yaml",
            description="Event store in plain files, one directory per team",
            schemes=("yaml",),
            open=open_yaml_store,
            init=init_yaml_store,
        )
    ]
