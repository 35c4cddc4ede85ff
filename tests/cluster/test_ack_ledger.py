"""AckLedger: acknowledgements as a client received them, checked against a real stored log.

The log is written by the local runtime (a real team on a SQLite store); the
contradicting acknowledgements are built from real ones, changed the way a
stale or second owner would have answered.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.cluster import connect
from akgentic.cluster.client import Ack, RuntimeClient
from akgentic.cluster.local import LocalRuntime
from akgentic.team.store import EventStore
from akgentic.testing.cluster_team import quiet_team_card
from akgentic.testing.runtime_contract import AckLedger


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[RuntimeClient]:
    client = connect("local:", store=f"sqlite:///{tmp_path / 'teams.db'}")
    yield client
    client.close()


@pytest.fixture
def store(runtime: RuntimeClient) -> EventStore:
    assert isinstance(runtime, LocalRuntime)
    return runtime.manager.event_store


def _two_acks(runtime: RuntimeClient, ledger: AckLedger) -> tuple[Ack, Ack]:
    team_id = runtime.create(quiet_team_card())
    first = ledger.send(runtime, team_id, "one", key="k-1")
    second = ledger.send(runtime, team_id, "two", key="k-2")
    return first, second


def test_acknowledgements_that_match_the_log_raise_nothing(
    runtime: RuntimeClient, store: EventStore
) -> None:
    ledger = AckLedger()
    first, second = _two_acks(runtime, ledger)
    again = ledger.send(runtime, first.team_id, "one", key="k-1")
    assert again.duplicate and ledger.problems(store) == []
    assert ledger.acks == [first, second, again]
    assert ledger.from_worker(first.worker) == [first, second, again]
    assert ledger.from_worker("someone else") == []


def test_a_key_not_at_its_acknowledged_sequence_is_reported(
    runtime: RuntimeClient, store: EventStore
) -> None:
    ledger = AckLedger()
    first, second = _two_acks(runtime, ledger)
    ledger.record(first.model_copy(update={"sequence": second.sequence}))
    problems = ledger.problems(store)
    assert any("is not there" in p for p in problems)
    assert any("at sequences" in p for p in problems)  # one key, two sequences


def test_two_workers_under_one_epoch_are_reported(
    runtime: RuntimeClient, store: EventStore
) -> None:
    ledger = AckLedger()
    first, _ = _two_acks(runtime, ledger)
    ledger.record(first.model_copy(update={"worker": "impostor", "duplicate": True}))
    assert any("acknowledged by ['" in p for p in ledger.problems(store))


def test_a_later_sequence_under_an_older_epoch_is_reported(
    runtime: RuntimeClient, store: EventStore
) -> None:
    ledger = AckLedger()
    team_id = runtime.create(quiet_team_card())
    first = runtime.send(team_id, "one", key="k-1")
    second = runtime.send(team_id, "two", key="k-2")
    assert first.epoch is not None
    # As if a newer owner wrote the first and a fenced one the second, after it.
    ledger.record(first.model_copy(update={"epoch": first.epoch + 1, "worker": "new"}))
    ledger.record(second)
    problems = ledger.problems(store)
    assert any("under epoch" in p and "after sequence" in p for p in problems)
    assert any("stored" in p for p in problems)  # epoch newer than the record's
