"""The PostgreSQL store runs the shared EventStoreContract on a real server.

Each test gets its own freshly initialised schema (see conftest.py), so the
kit's crash test, which reopens the store in a child process, sees exactly
the data of its own test.
"""

from __future__ import annotations

from uuid import uuid4

import psycopg
import pytest
from akgentic_postgres.store import PostgresEventStore

from akgentic.team.errors import EventStoreError
from akgentic.testing.event_store_contract import (
    ContractMetadata,
    EventStoreContract,
    contract_event,
    contract_process,
)


class TestPostgresEventStoreContract(EventStoreContract):
    opener = "akgentic_postgres.store:PostgresEventStore.from_url"
    native_paging = True
    supports_takeover = True

    @pytest.fixture
    def store_url(self, initialised_url: str) -> str:
        return initialised_url


# Values that mean something to PostgreSQL array literals, JSON operators or the
# planner; as filter values they must each match only the team that carries them.
PG_HOSTILE = (
    "{acme,contoso}",
    '{"acme"}',
    "ARRAY['acme']",
    'acme"}, {"x',
    "@> ARRAY['tenant|acme']",
    "?| array['a']",
    "$.tenant",
    "NULL",
    "\\N",
    "'acme'::text",
)


@pytest.fixture
def store(initialised_url: str) -> PostgresEventStore:
    return PostgresEventStore.from_url(initialised_url)


def test_array_and_json_syntax_in_filter_values_is_matched_literally(
    store: PostgresEventStore,
) -> None:
    try:
        ids = {}
        for value in (*PG_HOSTILE, "acme", "contoso"):
            process = contract_process(metadata=ContractMetadata(tenant=value))
            store.save_team(process)
            ids[value] = process.team_id
        for value in PG_HOSTILE:
            found = [p.team_id for p in store.list_teams(metadata={"tenant": value})]
            assert found == [ids[value]], value
    finally:
        store.close()


def test_a_nul_character_in_a_filter_matches_nothing_instead_of_failing(
    store: PostgresEventStore,
) -> None:
    try:
        store.save_team(contract_process(metadata=ContractMetadata(tenant="acme")))
        assert store.list_teams(metadata={"tenant": "acme\x00"}) == []
        assert store.list_teams(user_id="alice\x00") == []
    finally:
        store.close()


def test_metadata_filters_are_served_by_the_gin_index_with_a_bound_array(
    store: PostgresEventStore, pg_url: str, pg_schema: str
) -> None:
    try:
        for i in range(50):
            store.save_team(contract_process(metadata=ContractMetadata(tenant=f"t{i}")))
    finally:
        store.close()
    with psycopg.connect(pg_url.partition("?")[0], autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            f'EXPLAIN SELECT team_id FROM "{pg_schema}".akgentic_teams '
            "WHERE metadata_indexes @> %s::text[]",
            (["tenant|t7"],),
        ).fetchall()
    text = "\n".join(row[0] for row in plan)
    assert "akgentic_teams_metadata_idx" in text, text


def test_a_failed_batch_leaves_no_event_and_names_the_taken_sequence(
    store: PostgresEventStore,
) -> None:
    from akgentic.team.errors import DuplicateEventError

    try:
        team_id = uuid4()
        store.save_events([contract_event(team_id, 1), contract_event(team_id, 2)])
        with pytest.raises(DuplicateEventError) as info:
            store.save_events([contract_event(team_id, 3), contract_event(team_id, 2)])
        assert info.value.sequence == 2
        with pytest.raises(DuplicateEventError) as twice:
            store.save_events([contract_event(team_id, 4), contract_event(team_id, 4)])
        assert twice.value.sequence == 4
        assert [e.sequence for e in store.load_events(team_id)] == [1, 2]
    finally:
        store.close()


def test_a_closed_store_refuses_calls_with_a_store_error(store: PostgresEventStore) -> None:
    store.close()
    store.close()
    with pytest.raises(EventStoreError, match="closed"):
        store.load_team(uuid4())


def test_an_event_postgresql_refuses_for_a_nul_character_is_quarantined_not_fatal(
    store: PostgresEventStore,
) -> None:
    # JSONB cannot hold U+0000: a real refusal of one event (an exec's output
    # with a NUL byte) that must not stop the team's log.
    from akgentic.core.messages import UserMessage
    from akgentic.team import EventQuarantined, PersistenceSubscriber

    team_id = uuid4()
    try:
        store.save_team(contract_process(team_id))
        subscriber = PersistenceSubscriber(team_id, store, batching=True)
        subscriber.on_messages(
            [UserMessage(content=text) for text in ("before", "bin\x00ary", "after")]
        )
        subscriber.close(timeout=30.0)
        events = store.load_events(team_id)
        assert [e.sequence for e in events] == [1, 2, 3]
        assert isinstance(events[1].event, EventQuarantined)
        assert "NUL" in events[1].event.reason and "\\u0000" in events[1].event.original
        assert events[2].event.content == "after"  # type: ignore[attr-defined]
    finally:
        store.delete_team(team_id)
        store.close()
