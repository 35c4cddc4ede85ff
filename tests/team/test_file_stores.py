"""What each built-in store promises beyond the shared contract: files, modes, recovery."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from uuid import uuid4

import pytest
import yaml

from akgentic.team import (
    AgentStateSnapshot,
    EventLogUnreadableError,
    EventStoreError,
    SqliteEventStore,
    TeamRecordUnreadableError,
    YamlEventStore,
)
from akgentic.testing.event_store_contract import (
    ContractMetadata,
    ContractState,
    contract_event,
    contract_process,
)

# -- SQLite -----------------------------------------------------------------


def test_sqlite_runs_in_wal_mode_with_fsynced_commits_by_default(tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        conn = store._connection()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_sqlite_creates_its_database_with_pages_an_event_row_fits_in(tmp_path: Path) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        store.save_event(contract_event(uuid4(), 1))
        assert store._connection().execute("PRAGMA page_size").fetchone()[0] == 16384


def test_sqlite_keeps_the_page_size_of_a_file_it_did_not_create(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA page_size=4096")
        conn.execute("CREATE TABLE other (x)")
    conn.close()
    with SqliteEventStore(path) as store:
        store.save_event(contract_event(uuid4(), 1))
        assert store._connection().execute("PRAGMA page_size").fetchone()[0] == 4096


def test_sqlite_synchronous_can_be_relaxed_from_the_url(tmp_path: Path) -> None:
    with SqliteEventStore.from_url(f"sqlite:///{tmp_path}/a.db?synchronous=normal") as store:
        assert store._connection().execute("PRAGMA synchronous").fetchone()[0] == 1


def test_sqlite_creates_the_three_tables_and_the_metadata_index(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "a.db"
    SqliteEventStore(path).close()
    with sqlite3.connect(path) as conn:
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert tables == {"teams", "events", "agent_states", "team_metadata_index"}


def test_sqlite_in_memory_store_works_for_tests() -> None:
    with SqliteEventStore() as store:
        store.save_event(contract_event(uuid4(), 1))
        assert store.path is None


def test_sqlite_refuses_a_database_from_a_newer_version(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=99")
    with pytest.raises(EventStoreError, match="newer than this akgentic understands"):
        SqliteEventStore(path)


def test_a_closed_sqlite_store_says_so(tmp_path: Path) -> None:
    store = SqliteEventStore(tmp_path / "a.db")
    store.close()
    store.close()
    with pytest.raises(EventStoreError, match="closed"):
        store.load_events(uuid4())


def test_sqlite_skips_an_unreadable_team_in_listings_but_not_in_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with SqliteEventStore(tmp_path / "a.db") as store:
        good = contract_process(metadata=ContractMetadata(tenant="acme"))
        bad = contract_process(metadata=ContractMetadata(tenant="acme"))
        store.save_team(good)
        store.save_team(bad)
        store._connection().execute(
            'UPDATE teams SET payload = \'{"not": "a team"}\' WHERE team_id = ?',
            (str(bad.team_id),),
        )
        with caplog.at_level(logging.WARNING):
            assert store.list_teams(metadata={"tenant": "acme"}) == [good]
        assert "unreadable team record" in caplog.text
        with pytest.raises(TeamRecordUnreadableError, match=str(bad.team_id)):
            store.load_team(bad.team_id)


def test_sqlite_reports_which_event_cannot_be_decoded(tmp_path: Path) -> None:
    team_id = uuid4()
    with SqliteEventStore(tmp_path / "a.db") as store:
        store.save_event(contract_event(team_id, 1))
        store._connection().execute('UPDATE events SET payload = \'{"__model__": "no.Such"}\'')
        with pytest.raises(EventLogUnreadableError, match=f"event 1 of team {team_id}"):
            store.load_events(team_id)


# -- YAML -------------------------------------------------------------------


def test_yaml_store_lays_out_one_directory_per_team(tmp_path: Path) -> None:
    process = contract_process(metadata=ContractMetadata(tenant="acme"))
    team_id = process.team_id
    with YamlEventStore(tmp_path) as store:
        store.save_team(process)
        store.save_event(contract_event(team_id, 1))
        store.save_event(contract_event(team_id, 2))
        store.save_agent_state(
            AgentStateSnapshot(team_id=team_id, agent_id="agent-1", state=ContractState())
        )
    team_dir = tmp_path / str(team_id)
    assert sorted(p.name for p in team_dir.iterdir()) == ["events.yaml", "states", "team.yaml"]
    assert [p.name for p in (team_dir / "states").iterdir()] == ["agent-1.yaml"]
    team = yaml.safe_load((team_dir / "team.yaml").read_text(encoding="utf-8"))
    assert team["status"] == "running"
    assert team["metadata_indexes"] == ["tenant|acme"]
    events = yaml.safe_load((team_dir / "events.yaml").read_text(encoding="utf-8"))
    assert [e["sequence"] for e in events] == [1, 2]


def test_yaml_store_ignores_a_partial_last_record_and_trims_it_before_appending(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    team_id = uuid4()
    with YamlEventStore(tmp_path) as store:
        store.save_event(contract_event(team_id, 1))
        store.save_event(contract_event(team_id, 2))
    log = tmp_path / str(team_id) / "events.yaml"
    whole = log.read_bytes()
    line_two = whole.index(b"- ", 1)
    log.write_bytes(whole[: line_two + 25])  # record 2 cut short by a "crash"

    with YamlEventStore(tmp_path) as reopened, caplog.at_level(logging.WARNING):
        assert [e.sequence for e in reopened.load_events(team_id)] == [1]
        assert reopened.get_max_sequence(team_id) == 1
        reopened.save_event(contract_event(team_id, 2, content="rewritten"))
        events = reopened.load_events(team_id)
    assert [(e.sequence, e.event.content) for e in events] == [  # type: ignore[attr-defined]
        (1, "message 1"),
        (2, "rewritten"),
    ]
    assert "incomplete record" in caplog.text
    assert len(yaml.safe_load(log.read_text(encoding="utf-8"))) == 2


def test_yaml_store_refuses_a_log_corrupted_in_the_middle(tmp_path: Path) -> None:
    team_id = uuid4()
    with YamlEventStore(tmp_path) as store:
        for sequence in (1, 2, 3):
            store.save_event(contract_event(team_id, sequence))
        log = tmp_path / str(team_id) / "events.yaml"
        lines = log.read_bytes().splitlines(keepends=True)
        log.write_bytes(lines[0] + b"- {garbage\n" + lines[2])
        with pytest.raises(EventLogUnreadableError, match="record 2"):
            store.load_events(team_id)


def test_yaml_store_sees_appends_made_by_another_handle(tmp_path: Path) -> None:
    team_id = uuid4()
    with YamlEventStore(tmp_path) as first, YamlEventStore(tmp_path) as second:
        first.save_event(contract_event(team_id, 1))
        assert second.get_max_sequence(team_id) == 1
        second.save_event(contract_event(team_id, 2))
        assert first.get_max_sequence(team_id) == 2
        first.delete_team(team_id)
        second.save_event(contract_event(team_id, 1))
        assert [e.sequence for e in first.load_events(team_id)] == [1]


def test_yaml_store_keeps_odd_agent_ids_inside_the_states_directory(tmp_path: Path) -> None:
    team_id = uuid4()
    odd = "../../escape/../me"
    with YamlEventStore(tmp_path) as store:
        store.save_agent_state(
            AgentStateSnapshot(team_id=team_id, agent_id=odd, state=ContractState())
        )
        (snapshot,) = store.load_agent_states(team_id)
    assert snapshot.agent_id == odd
    states = tmp_path / str(team_id) / "states"
    assert [p.parent for p in tmp_path.rglob("*.yaml")] == [states]


def test_yaml_store_leaves_no_temporary_files_behind(tmp_path: Path) -> None:
    process = contract_process()
    with YamlEventStore(tmp_path) as store:
        for _ in range(3):
            store.save_team(process)
            store.save_agent_state(
                AgentStateSnapshot(team_id=process.team_id, agent_id="a", state=ContractState())
            )
    assert [p.name for p in tmp_path.rglob(".*")] == []


def test_yaml_store_finishes_an_interrupted_delete_when_reopened(tmp_path: Path) -> None:
    leftover = tmp_path / f".deleted-{uuid4()}-abc"
    (leftover / "states").mkdir(parents=True)
    with YamlEventStore(tmp_path) as store:
        assert store.list_teams() == []
    assert not leftover.exists()


def test_yaml_store_skips_an_unreadable_team_in_listings_but_not_in_load(
    tmp_path: Path,
) -> None:
    good, bad = contract_process(), contract_process()
    with YamlEventStore(tmp_path) as store:
        store.save_team(good)
        store.save_team(bad)
        (tmp_path / str(bad.team_id) / "team.yaml").write_text("team: [unclosed\n")
        assert store.list_teams() == [good]
        with pytest.raises(TeamRecordUnreadableError):
            store.load_team(bad.team_id)


def test_a_closed_yaml_store_says_so(tmp_path: Path) -> None:
    store = YamlEventStore(tmp_path)
    store.close()
    with pytest.raises(EventStoreError, match="closed"):
        store.load_events(uuid4())


def test_the_yaml_integrity_scan_names_stray_entries_and_broken_log_lines(tmp_path: Path) -> None:
    from uuid import uuid4

    from akgentic.testing.event_store_contract import contract_event, contract_process

    with YamlEventStore(tmp_path / "teams") as store:
        process = contract_process()
        store.save_team(process)
        for sequence in (1, 2, 3):
            store.save_event(contract_event(process.team_id, sequence))
        assert store.check_integrity() == []
        (tmp_path / "teams" / "notes.txt").write_text("not a team")
        log = tmp_path / "teams" / str(process.team_id) / "events.yaml"
        lines = log.read_bytes().splitlines(keepends=True)
        log.write_bytes(lines[0] + b"- {not json\n" + b"".join(lines[2:]))
        problems = store.check_integrity()
        assert any("notes.txt" in p and "not a team directory" in p for p in problems)
        assert any("record 2 is not valid" in p for p in problems)
        assert uuid4() not in store.stored_team_ids()


@pytest.mark.parametrize("kind", ["sqlite", "yaml"])
def test_a_claim_is_a_lock_file_removed_with_its_team(kind: str, tmp_path: Path) -> None:
    from akgentic.team.models import TeamOwner
    from akgentic.testing.event_store_contract import contract_process

    if kind == "sqlite":
        store: SqliteEventStore | YamlEventStore = SqliteEventStore(tmp_path / "a.db")
        lock_dir = tmp_path / "a.db.owners"
    else:
        store = YamlEventStore(tmp_path / "teams")
        lock_dir = tmp_path / "teams" / ".owners"
    with store:
        process = contract_process()
        claimed = store.claim_team(process.team_id, TeamOwner.current("t"), create=process)
        lock = lock_dir / f"{process.team_id}.lock"
        assert lock.is_file() and claimed.epoch == 1
        assert [p.team_id for p in store.list_teams()] == [process.team_id]
        store.delete_team(process.team_id)
        store.release_team(process.team_id)
        assert not lock.exists()
        assert not store.claim_held(process.team_id)
