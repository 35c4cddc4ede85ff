"""Paging a log: the fallback for stores written before ``load_events_page``, and its checks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.team.models import PersistedEvent
from akgentic.team.store import EventStore, PagedEventStore, load_events_page
from akgentic.team.stores.sqlite import SqliteEventStore
from akgentic.testing.event_store_fixtures import contract_event
from akgentic.testing.event_store_paging import PagingContract


class _OldStore:
    """A third-party store of before paging: the protocol's methods and nothing else."""

    def __init__(self, inner: SqliteEventStore) -> None:
        self._inner = inner
        self.full_loads = 0

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        self.full_loads += 1
        return self._inner.load_events(team_id)

    def __getattr__(self, name: str) -> Any:
        if name == "load_events_page":
            raise AttributeError(name)
        return getattr(self._inner, name)


@pytest.fixture
def old_store(tmp_path: Path) -> Iterator[_OldStore]:
    inner = SqliteEventStore(tmp_path / "old.db")
    try:
        yield _OldStore(inner)
    finally:
        inner.close()


class TestPagingThroughTheLoadEventsFallback(PagingContract):
    """The kit's paging cases hold for a store without its own ``load_events_page``."""

    @pytest.fixture
    def store(self, old_store: _OldStore) -> EventStore:
        return old_store


def test_a_store_without_paging_is_still_an_event_store_and_pages_by_loading_all(
    old_store: _OldStore,
) -> None:
    team_id = UUID(int=7)
    for sequence in range(1, 6):
        old_store.save_event(contract_event(team_id, sequence))
    assert not isinstance(old_store, PagedEventStore)
    page = load_events_page(old_store, team_id, limit=2, newest=True)
    assert [e.sequence for e in page] == [4, 5]
    assert old_store.full_loads == 1


def test_a_native_store_pages_without_loading_the_whole_log(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "native.db")
    try:
        team_id = UUID(int=8)
        store.save_events([contract_event(team_id, s) for s in range(1, 1001)])
        loads: list[UUID] = []
        original = store.load_events

        def counted(team_id: UUID) -> list[PersistedEvent]:
            loads.append(team_id)
            return original(team_id)

        store.load_events = counted  # type: ignore[method-assign]
        page = load_events_page(store, team_id, before_sequence=1000, limit=3, newest=True)
        assert [e.sequence for e in page] == [997, 998, 999]
        assert loads == []
    finally:
        store.close()
