"""Claim sessions are kept for the next claim once released, holding no lock meanwhile.

Real PostgreSQL (``$AKGENTIC_TEST_POSTGRES_URL``); the reuse is observed through
the server's backend process id of the claim's session.
"""

from __future__ import annotations

from akgentic_postgres.store import PostgresEventStore

from akgentic.testing.event_store_fixtures import contract_process
from akgentic.testing.event_store_ownership import contract_owner


def _session_pid(store: PostgresEventStore, team_id: object) -> int:
    return int(store._claims[team_id].info.backend_pid)  # type: ignore[index]


def test_a_released_claim_session_is_unlocked_and_serves_the_next_claim(
    initialised_url: str,
) -> None:
    store = PostgresEventStore.from_url(initialised_url)
    other = PostgresEventStore.from_url(initialised_url)
    try:
        first, second = contract_process(), contract_process()
        store.claim_team(first.team_id, contract_owner(), create=first)
        pid = _session_pid(store, first.team_id)
        assert other.claim_held(first.team_id)
        store.release_team(first.team_id)
        assert not other.claim_held(first.team_id)

        store.claim_team(second.team_id, contract_owner(), create=second)
        assert _session_pid(store, second.team_id) == pid  # the same session, reused
        assert other.claim_held(second.team_id)
        assert not other.claim_held(first.team_id)  # it kept nothing of the first claim
        # Another handle can take the first team now.
        claimed = other.claim_team(first.team_id, contract_owner("other"))
        assert claimed.epoch == 2
        other.release_team(first.team_id)
        store.release_team(second.team_id)
    finally:
        other.close()
        store.close()
    assert store._spare_sessions == []  # closed with the store
