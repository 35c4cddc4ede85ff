"""A takeover on a file store whose previous owner froze in the middle of a write.

The contract kit freezes owners *between* writes. Here a child process stops
itself (SIGSTOP) while holding the lock a write holds: SQLite's write lock (an
open ``BEGIN IMMEDIATE`` transaction) or the YAML team's ``.write.lock``, held
shared as a fenced append holds it. The child takes the lock with the same
calls the store makes rather than through the store itself, because a real
write cannot be stopped at an exact point from outside; what is verified is the
takeover's side: it gives up within its bound, changes nothing, and succeeds
once the lock is free.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.team.errors import StoreUnreadableError, TeamOwnedError
from akgentic.team.stores.sqlite import SqliteEventStore
from akgentic.team.stores.yaml import WRITE_LOCK, YamlEventStore
from akgentic.testing import wait_until
from akgentic.testing.event_store_fixtures import contract_process
from akgentic.testing.event_store_ownership import contract_owner

_SQLITE_CHILD = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
conn.execute("ROLLBACK")
"""

_YAML_CHILD = """
import fcntl, os, signal, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
os.close(fd)
"""


def _stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in ("T", "t")


@pytest.fixture
def frozen_writer() -> Iterator[list[subprocess.Popen[str]]]:
    children: list[subprocess.Popen[str]] = []
    yield children
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()
            child.wait(timeout=30)
        assert child.stdout is not None
        child.stdout.close()  # the pipe ``held`` came through


def _freeze(children: list[subprocess.Popen[str]], code: str, path: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True
    )
    children.append(child)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    wait_until(lambda: _stopped(child.pid), timeout=30)
    return child


def _thaw(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGCONT)
    assert child.wait(timeout=30) == 0


def test_sqlite_takeover_waits_for_a_frozen_write_up_to_the_timeout(
    tmp_path: Path, frozen_writer: list[subprocess.Popen[str]]
) -> None:
    path = tmp_path / "teams.db"
    store = SqliteEventStore(path, timeout=0.5)
    try:
        process = contract_process()
        store.save_team(process)
        child = _freeze(frozen_writer, _SQLITE_CHILD, path)
        started = time.monotonic()
        with pytest.raises(StoreUnreadableError, match="locked"):
            store.take_over_team(process.team_id, contract_owner(), epoch=process.epoch)
        assert time.monotonic() - started < 20
        _thaw(child)
        assert store.load_team(process.team_id) == process
        taken = store.take_over_team(process.team_id, contract_owner(), epoch=process.epoch)
        assert taken.epoch == process.epoch + 1
    finally:
        store.close()


def test_yaml_takeover_gives_up_on_a_frozen_write_and_changes_nothing(
    tmp_path: Path, frozen_writer: list[subprocess.Popen[str]]
) -> None:
    store = YamlEventStore(tmp_path / "teams")
    store.takeover_wait = 0.5
    try:
        process = contract_process()
        store.save_team(process)
        child = _freeze(
            frozen_writer, _YAML_CHILD, tmp_path / "teams" / str(process.team_id) / WRITE_LOCK
        )
        started = time.monotonic()
        with pytest.raises(TeamOwnedError, match="middle of a write"):
            store.take_over_team(process.team_id, contract_owner(), epoch=process.epoch)
        assert time.monotonic() - started < 20
        assert store.load_team(process.team_id) == process
        _thaw(child)
        taken = store.take_over_team(process.team_id, contract_owner(), epoch=process.epoch)
        assert taken.epoch == process.epoch + 1
    finally:
        store.close()
