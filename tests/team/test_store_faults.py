"""Store faults reach the user as one ``error:`` line and a non-zero exit; nothing changes.

Each case runs the real command line in a subprocess against a real damaged or
misplaced store, and compares the bytes on disk before and after.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.team import SqliteEventStore, TeamStatus, YamlEventStore
from akgentic.testing.cards import entry_echo_team_yaml
from akgentic.testing.event_store_contract import contract_event

Run = Callable[..., subprocess.CompletedProcess[str]]

CARD = entry_echo_team_yaml("fault-team", "team_test_agents.Echo")


@pytest.fixture
def card_file(tmp_path: Path) -> Path:
    path = tmp_path / "card.yaml"
    path.write_text(CARD)
    return path


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (or ``root`` itself) with a digest of its bytes."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def assert_one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Non-zero exit, no traceback, and exactly one line on stderr starting ``error:``."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def stopped_sqlite_team(path: Path, run_cli: Run, card_file: Path) -> str:
    created = run_cli("team", "create", str(card_file), "--store", f"sqlite:///{path}")
    assert created.returncode == 0, created.stderr
    return created.stdout.split()[-1]


def test_a_truncated_sqlite_file_is_one_line_for_list_and_resume(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    path = tmp_path / "data.db"
    team_id = stopped_sqlite_team(path, run_cli, card_file)
    data = path.read_bytes()
    path.write_bytes(data[: max(4096, len(data) // 3)])
    before = snapshot(tmp_path)
    for args in (("team", "list"), ("team", "resume", team_id, "--no-interactive")):
        result = run_cli(*args, "--store", f"sqlite:///{path}")
        assert_one_line_error(result, str(path))
    assert snapshot(tmp_path) == before


def test_a_sqlite_file_with_a_zeroed_header_is_one_line(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    path = tmp_path / "data.db"
    stopped_sqlite_team(path, run_cli, card_file)
    data = path.read_bytes()
    path.write_bytes(b"\0" * 100 + data[100:])
    before = snapshot(tmp_path)
    for args in (("team", "list"), ("team", "create", str(card_file), "--no-interactive")):
        result = run_cli(*args, "--store", f"sqlite:///{path}")
        assert_one_line_error(result, "not a SQLite database")
    assert snapshot(tmp_path) == before


def test_a_text_file_named_as_the_sqlite_store_is_left_alone(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping: milk, eggs\n")
    for args in (("team", "list"), ("team", "create", str(card_file), "--no-interactive")):
        result = run_cli(*args, "--store", "sqlite:///notes.txt")
        assert_one_line_error(result, "notes.txt", "not a SQLite database")
    assert notes.read_text() == "shopping: milk, eggs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.yaml", "notes.txt"]


def test_a_store_path_under_an_existing_file_is_one_line(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("x")
    for url in ("sqlite:///notes.txt/data/akgentic.db", "yaml:///notes.txt/teams"):
        for args in (
            ("team", "list"),
            ("team", "create", str(card_file), "--no-interactive"),
            ("store", "init", url),
        ):
            full = args if args[0] == "store" else (*args, "--store", url)
            assert_one_line_error(run_cli(*full), "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "x"


def test_a_yaml_store_url_naming_a_file_is_one_line(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    (tmp_path / "afile").write_text("not a directory")
    for args in (("team", "list"), ("team", "create", str(card_file), "--no-interactive")):
        result = run_cli(*args, "--store", "yaml:///afile")
        assert_one_line_error(result, "afile", "directory")
    assert (tmp_path / "afile").read_text() == "not a directory"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://user@127.0.0.1:notaport/db",
        "postgresql://user:secret@[::1/db",
        "postgresql://user@127.0.0.1:99999/db",
    ],
)
def test_a_malformed_postgresql_url_is_one_line_without_the_password(
    run_cli: Run, url: str
) -> None:
    result = run_cli("team", "list", "--store", url)
    assert_one_line_error(result, "not a valid PostgreSQL URL")
    assert result.returncode == 2
    assert "secret" not in result.stderr


def test_listing_an_existing_empty_file_does_not_make_it_a_database(
    run_cli: Run, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    for args in (("team", "list"), ("store", "check", "sqlite:///empty.db")):
        full = args if args[0] == "store" else (*args, "--store", "sqlite:///empty.db")
        assert_one_line_error(run_cli(*full), "empty")
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


def test_resuming_a_yaml_team_whose_log_is_empty_is_one_line_and_changes_nothing(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    url = f"yaml:///{tmp_path}/teams"
    created = run_cli("team", "create", str(card_file), "--store", url)
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.split()[-1]
    (tmp_path / "teams" / team_id / "events.yaml").write_bytes(b"")
    before = snapshot(tmp_path / "teams")
    result = run_cli("team", "resume", team_id, "--no-interactive", "--store", url)
    assert_one_line_error(result, "empty event log")
    assert snapshot(tmp_path / "teams") == before
    with YamlEventStore(tmp_path / "teams") as store:
        process = store.load_team(UUID(team_id))
        assert process is not None and process.status == TeamStatus.STOPPED
        assert not store.claim_held(UUID(team_id))


@contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """Make ``directory`` refuse new entries, even to root (``chattr +i``), then undo it."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(directory)]).returncode != 0:
        pytest.skip("running as root and the file system refuses chattr +i")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(directory)], check=True)


def test_a_sqlite_store_in_a_read_only_directory_is_one_line_even_for_list(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    directory = tmp_path / "ro"
    directory.mkdir()
    path = directory / "data.db"
    team_id = stopped_sqlite_team(path, run_cli, card_file)
    before = snapshot(directory)
    with read_only(directory):
        for args in (("team", "list"), ("team", "resume", team_id, "--no-interactive")):
            result = run_cli(*args, "--store", f"sqlite:///{path}")
            assert_one_line_error(result, "writable")
    assert snapshot(directory) == before
    with SqliteEventStore(path) as store:
        process = store.load_team(UUID(team_id))
        assert process is not None and process.status == TeamStatus.STOPPED


def test_store_check_finds_an_orphan_and_store_repair_removes_only_it(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    path = tmp_path / "data.db"
    url = f"sqlite:///{path}"
    team_id = stopped_sqlite_team(path, run_cli, card_file)
    orphan = uuid4()
    with SqliteEventStore(path) as handle:  # what a failed create left behind on older versions
        for sequence in (1, 2, 3):
            handle.save_event(contract_event(orphan, sequence))
        kept = handle.load_events(UUID(team_id))
    checked = run_cli("store", "check", url)
    assert checked.returncode == 1, checked.stderr
    assert f"PROBLEM {orphan}" in checked.stdout
    assert "orphan" in checked.stdout
    assert f"ok      {team_id} fault-team stopped" in checked.stdout
    repaired = run_cli("store", "repair", url)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert f"removed orphan {orphan}" in repaired.stdout
    clean = run_cli("store", "check", url, "--json")
    assert clean.returncode == 0, clean.stdout
    report = json.loads(clean.stdout)
    assert report["ok"] is True
    assert [team["team_id"] for team in report["teams"]] == [team_id]
    with SqliteEventStore(path) as handle:
        assert handle.load_events(orphan) == []
        assert handle.load_events(UUID(team_id)) == kept


def test_store_check_of_a_damaged_sqlite_file_is_one_line_and_exit_1(
    run_cli: Run, card_file: Path, tmp_path: Path
) -> None:
    path = tmp_path / "data.db"
    stopped_sqlite_team(path, run_cli, card_file)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    before = snapshot(tmp_path)
    for command in ("check", "repair"):
        result = run_cli("store", command, f"sqlite:///{path}")
        assert result.returncode == 1
        assert "Traceback" not in result.stderr + result.stdout
    assert snapshot(tmp_path) == before
