"""SIGKILL during passivation: no acknowledged event is lost and the next activation succeeds.

A child process runs a team on a SQLite store, waits until its events are
acknowledged, then lets the team passivate; its store freezes the write of the
passivated record (before it, or right after it) and the parent kills the
child there with SIGKILL. The parent then activates the team by sending it a
message, in a manager of its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
from akgentic.team import SqliteEventStore, TeamManager, TeamStatus

CHILD = r"""
import sys, threading
from typing import Any
from akgentic.core import ActorSystem
from akgentic.team import SqliteEventStore, TeamCard, TeamManager, TeamStatus

path, when = sys.argv[1], sys.argv[2]

class FreezingStore(SqliteEventStore):
    def save_team(self, process: Any, **kwargs: Any) -> Any:
        if process.status == TeamStatus.PASSIVATED:
            if when == "after":
                super().save_team(process, **kwargs)
            print("PASSIVATING", flush=True)
            threading.Event().wait()  # frozen here until the parent kills the process
        return super().save_team(process, **kwargs)

def member(name):
    return {"card": {"agent_class": "team_test_agents.Echo", "description": name,
                     "config": {"name": name, "role": name.strip("@")}}}

card = TeamCard.model_validate({
    "name": "kill", "entry_point": member("@Entry"), "members": [member("@Echo")],
    "message_types": ["akgentic.core.messages.message.UserMessage"],
    "passivate_after": 0.3,
})
store = FreezingStore(path)
manager = TeamManager(ActorSystem(), store)
runtime = manager.create_team(card)
for i in range(20):
    runtime.send(f"m{i}")
assert runtime.wait_idle(30)
persistence = manager.get_persistence(runtime.id)
persistence.flush(30)
print("ACKED", runtime.id, persistence.durable_sequence, flush=True)
threading.Event().wait()
"""


@pytest.fixture
def child_env(cli_env: dict[str, str]) -> dict[str, str]:
    return cli_env


@pytest.fixture
def kill_list() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=10)  # reaps it and closes its pipes


@pytest.mark.parametrize("when", ["before", "after"])
def test_sigkill_while_passivating_loses_no_acknowledged_event(
    when: str,
    tmp_path: Path,
    child_env: dict[str, str],
    kill_list: list[subprocess.Popen[str]],
) -> None:
    path = tmp_path / "kill.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), when],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env,
    )
    kill_list.append(child)
    assert child.stdout is not None
    acked = child.stdout.readline().split()
    assert acked[:1] == ["ACKED"], acked
    team_id, durable = UUID(acked[1]), int(acked[2])
    assert child.stdout.readline().strip() == "PASSIVATING"
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=10)

    store = SqliteEventStore(path)
    system = ActorSystem()
    manager = TeamManager(system, store)
    try:
        events = store.load_events(team_id)
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        assert len(events) >= durable  # everything acknowledged is there
        record = manager.get_team(team_id)
        assert record is not None
        expected = TeamStatus.PASSIVATED if when == "after" else TeamStatus.RUNNING
        assert record.status == expected
        runtime = manager.send(team_id, "after the kill")  # activation on demand
        assert runtime.wait_idle(30)
        seen = ProxyWrapper(runtime.addrs["@Echo"], ask=True, timeout=10).seen()
        assert seen == [f"m{i}" for i in range(20)] + ["after the kill"]
        manager.get_persistence(team_id).flush(10)  # type: ignore[union-attr]
        after = store.load_events(team_id)
        assert [e.sequence for e in after] == list(range(1, len(after) + 1))
        assert after[: len(events)] == events
    finally:
        manager.stop_all()
        system.shutdown(timeout=10)
        store.close()
