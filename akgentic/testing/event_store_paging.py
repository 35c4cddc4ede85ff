"""The paging half of the event store contract: windows of a log, read in order.

:class:`PagingContract` is mixed into :class:`~akgentic.testing.EventStoreContract`,
so every store that runs the kit is checked through
:func:`akgentic.team.store.load_events_page` — natively when the store has
``load_events_page``, through the fallback over ``load_events`` otherwise.
The cases: pages come back in ascending order whatever the write order; the
bounds are exclusive; ``limit`` keeps the oldest, or with ``newest=True`` the
newest, events of the window; a page after the last event, an empty window and
an unknown team give ``[]``; walking a log backward or forward page by page
gives the whole log exactly once; other teams never leak in; invalid arguments
raise ``ValueError``. Set ``native_paging = True`` in a subclass whose store
implements :class:`~akgentic.team.store.PagedEventStore` itself, and the kit
checks that it does.
"""

from __future__ import annotations

from typing import ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.team.store import EventStore, PagedEventStore, load_events_page
from akgentic.testing.event_store_fixtures import contract_event

__all__ = ["PagingContract"]


def _fill(store: EventStore, team_id: UUID, sequences: list[int]) -> None:
    for sequence in sequences:
        store.save_event(contract_event(team_id, sequence))


def _seqs(store: EventStore, team_id: UUID, **page: object) -> list[int]:
    return [e.sequence for e in load_events_page(store, team_id, **page)]  # type: ignore[arg-type]


class PagingContract:
    """Paging cases of the event store kit (mixed into ``EventStoreContract``)."""

    #: The store implements ``load_events_page`` itself (not only through the fallback).
    native_paging: ClassVar[bool] = False

    def test_a_store_declaring_native_paging_implements_it(self, store: EventStore) -> None:
        if not self.native_paging:
            pytest.skip("store pages through the load_events fallback")
        assert isinstance(store, PagedEventStore)

    def test_a_page_is_in_ascending_order_whatever_the_write_order(self, store: EventStore) -> None:
        team_id = uuid4()
        _fill(store, team_id, [5, 2, 9, 1, 7, 3, 8, 4, 6, 10])
        assert _seqs(store, team_id) == list(range(1, 11))
        assert _seqs(store, team_id, limit=3) == [1, 2, 3]
        assert _seqs(store, team_id, limit=3, newest=True) == [8, 9, 10]
        page = load_events_page(store, team_id, after_sequence=4, limit=2)
        assert [e.event.content for e in page] == ["message 5", "message 6"]  # type: ignore[attr-defined]

    def test_page_bounds_are_exclusive(self, store: EventStore) -> None:
        team_id = uuid4()
        _fill(store, team_id, list(range(1, 11)))
        assert _seqs(store, team_id, after_sequence=3) == list(range(4, 11))
        assert _seqs(store, team_id, before_sequence=4) == [1, 2, 3]
        assert _seqs(store, team_id, after_sequence=3, before_sequence=7) == [4, 5, 6]
        assert _seqs(store, team_id, after_sequence=3, before_sequence=7, newest=True) == [
            4,
            5,
            6,
        ]
        assert _seqs(store, team_id, after_sequence=2, before_sequence=9, limit=2) == [3, 4]
        assert _seqs(store, team_id, after_sequence=2, before_sequence=9, limit=2, newest=True) == [
            7,
            8,
        ]
        assert _seqs(store, team_id, after_sequence=0, limit=1) == [1]

    def test_a_page_after_the_last_event_or_of_an_empty_window_is_empty(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        _fill(store, team_id, [1, 2, 3])
        assert _seqs(store, team_id, after_sequence=3) == []
        assert _seqs(store, team_id, after_sequence=99, limit=5) == []
        assert _seqs(store, team_id, before_sequence=1, newest=True, limit=5) == []
        assert _seqs(store, team_id, after_sequence=2, before_sequence=3) == []
        assert _seqs(store, team_id, after_sequence=3, before_sequence=2) == []

    def test_an_unknown_or_empty_team_has_empty_pages(self, store: EventStore) -> None:
        _fill(store, uuid4(), [1, 2])  # another team's log must not answer
        team_id = uuid4()
        assert _seqs(store, team_id) == []
        assert _seqs(store, team_id, limit=10, newest=True) == []
        assert _seqs(store, team_id, after_sequence=0, before_sequence=100) == []

    def test_pages_hold_only_their_team(self, store: EventStore) -> None:
        mine, other = uuid4(), uuid4()
        _fill(store, mine, [1, 2, 3, 4])
        _fill(store, other, [1, 2, 3, 4, 5, 6])
        page = load_events_page(store, mine, after_sequence=1, limit=10)
        assert [e.sequence for e in page] == [2, 3, 4]
        assert {e.team_id for e in page} == {mine}
        assert _seqs(store, mine, limit=2, newest=True) == [3, 4]

    def test_walking_pages_backward_and_forward_reads_the_log_once(self, store: EventStore) -> None:
        team_id = uuid4()
        _fill(store, team_id, list(range(1, 24)))
        backward: list[int] = []
        before: int | None = None
        while True:
            page = _seqs(store, team_id, before_sequence=before, limit=5, newest=True)
            if not page:
                break
            backward = page + backward
            before = page[0]
        forward: list[int] = []
        after = 0
        while page := _seqs(store, team_id, after_sequence=after, limit=5):
            forward += page
            after = page[-1]
        assert backward == forward == list(range(1, 24))

    def test_invalid_page_arguments_are_refused(self, store: EventStore) -> None:
        team_id = uuid4()
        _fill(store, team_id, [1])
        for arguments in (
            {"limit": 0},
            {"limit": -3},
            {"after_sequence": -1},
            {"before_sequence": -2},
        ):
            with pytest.raises(ValueError):
                load_events_page(store, team_id, **arguments)  # type: ignore[arg-type]
