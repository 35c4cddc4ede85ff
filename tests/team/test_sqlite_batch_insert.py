"""SqliteEventStore.save_events: one statement per batch, same rows, fence and refusals."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.team import DuplicateEventError, SqliteEventStore, TeamClaimLostError
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.sqlite import _CHUNK, _event_row
from akgentic.testing.event_store_contract import contract_event, contract_process


def stored_rows(store: SqliteEventStore) -> list[tuple[object, ...]]:
    return store._connection().execute("SELECT * FROM events ORDER BY team_id, sequence").fetchall()


def events(team_id: UUID, first: int, count: int) -> list[PersistedEvent]:
    return [contract_event(team_id, sequence) for sequence in range(first, first + count)]


def claimed(store: SqliteEventStore, epoch: int) -> UUID:
    team_id = uuid4()
    store.save_team(contract_process(team_id).model_copy(update={"epoch": epoch}))
    return team_id


@pytest.mark.parametrize("sizes", [[1], [15, 16, 17], [_CHUNK], [_CHUNK + 1], [3 * _CHUNK + 5]])
def test_batches_of_any_size_store_exactly_the_rows_of_each_event(
    sizes: list[int], tmp_path: Path
) -> None:
    # Differential: whatever the batch's size (padded statement, several chunks in one
    # transaction), the stored rows are the per-event rows an executemany would write.
    team_id = uuid4()
    written: list[PersistedEvent] = []
    with SqliteEventStore(tmp_path / "a.db") as store:
        for size in sizes:
            batch = events(team_id, len(written) + 1, size)
            store.save_events(batch)
            written += batch
        assert stored_rows(store) == [_event_row(event) for event in written]
        assert [e.sequence for e in store.load_events(team_id)] == list(range(1, len(written) + 1))


def test_a_batch_of_one_team_is_one_statement_with_its_fence(tmp_path: Path) -> None:
    # Each statement costs the writer a GIL round trip: BEGIN, the fence SELECT,
    # one step per row and COMMIT are folded into one autocommit INSERT.
    with SqliteEventStore(tmp_path / "a.db") as store:
        team_id = claimed(store, 3)
        traced: list[str] = []
        store._connection().set_trace_callback(traced.append)
        store.save_events(events(team_id, 1, 190), epoch=3)
        store._connection().set_trace_callback(None)
        assert len(traced) == 1 and traced[0].startswith("INSERT INTO events")
        assert len(stored_rows(store)) == 190


def test_a_fenced_batch_of_a_newer_epoch_writes_nothing(tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        team_id = claimed(store, 3)
        for size in (5, _CHUNK + 1):
            with pytest.raises(TeamClaimLostError) as refused:
                store.save_events(events(team_id, 1, size), epoch=2)
            assert (refused.value.epoch, refused.value.current) == (2, 3)
        assert stored_rows(store) == []


def test_a_fenced_batch_of_a_team_without_record_writes_nothing(tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        team_id = uuid4()
        with pytest.raises(TeamClaimLostError) as refused:
            store.save_events(events(team_id, 1, 4), epoch=1)
        assert refused.value.current is None
        assert stored_rows(store) == []


@pytest.mark.parametrize("size", [4, _CHUNK + 4])
def test_a_batch_with_a_taken_sequence_is_refused_whole(size: int, tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        team_id = claimed(store, 1)
        store.save_events(events(team_id, 1, 2), epoch=1)
        before = stored_rows(store)
        with pytest.raises(DuplicateEventError) as refused:
            store.save_events(events(team_id, 2, size), epoch=1)
        assert refused.value.sequence == 2
        inner = [*events(team_id, 10, 3), contract_event(team_id, 11)]
        with pytest.raises(DuplicateEventError) as twice:
            store.save_events(inner, epoch=1)
        assert twice.value.sequence == 11
        assert stored_rows(store) == before


def test_a_batch_of_two_teams_is_fenced_for_each(tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        first, second = claimed(store, 2), claimed(store, 5)
        with pytest.raises(TeamClaimLostError):
            store.save_events(events(first, 1, 2) + events(second, 1, 2), epoch=2)
        assert stored_rows(store) == []
        store.save_events(events(first, 1, 2) + events(second, 1, 2))
        assert len(stored_rows(store)) == 4
