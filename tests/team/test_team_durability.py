"""A team killed with SIGKILL mid-conversation resumes elsewhere with every acknowledged event."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.core import ActorSystem
from akgentic.core.messages.message import UserMessage
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team import TeamManager, open_event_store

CHILD = """
import sys
from akgentic.core import ActorSystem
from akgentic.team import TeamCard, TeamManager, open_event_store

card = TeamCard.model_validate({
    "entry_point": {"card": {"agent_class": "team_test_agents.Echo", "description": "e",
                             "config": {"name": "@Entry", "role": "Entry"}}},
    "members": [{"card": {"agent_class": "team_test_agents.Echo", "description": "e",
                          "config": {"name": "@Echo", "role": "Echo"}}}],
    "message_types": ["akgentic.core.messages.message.UserMessage"],
})
manager = TeamManager(ActorSystem(), open_event_store(sys.argv[1]))
runtime = manager.create_team(card)
persistence = manager.get_persistence(runtime.id)
print("team", runtime.id, flush=True)
n = 0
while True:
    n += 1
    runtime.send(f"message {n}")
    if n % 20 == 0:
        runtime.wait_idle(30)
        persistence.flush(30)
        print("durable", persistence.durable_sequence, n, flush=True)
"""


@pytest.mark.parametrize("scheme", ["sqlite", "yaml"])
def test_a_killed_team_resumes_in_a_new_process_with_every_acknowledged_event(
    scheme: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    url = f"sqlite:///{tmp_path}/a.db" if scheme == "sqlite" else f"yaml:///{tmp_path}/teams"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env,
    )
    team_id: UUID | None = None
    durable = sent = 0
    try:
        assert child.stdout is not None
        for line in child.stdout:
            words = line.split()
            if words[0] == "team":
                team_id = UUID(words[1])
            elif words[0] == "durable":
                durable, sent = int(words[1]), int(words[2])
                if sent >= 100:
                    break
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=60)
    assert team_id is not None and sent >= 100, child.stderr.read() if child.stderr else ""

    system = ActorSystem()
    store = open_event_store(url)
    try:
        events = store.load_events(team_id)
        assert len(events) >= durable
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        texts = [
            e.event.message.content
            for e in events
            if isinstance(e.event, SentMessage) and isinstance(e.event.message, UserMessage)
        ]
        assert texts[:sent] == [f"message {i}" for i in range(1, sent + 1)]

        manager = TeamManager(system, store)
        manager.stop_team(team_id)  # its process is gone: recorded as stopped
        runtime = manager.resume_team(team_id)
        history = runtime.orchestrator_proxy.get_messages()
        assert len(history) >= len(events) - 1  # every stored event replayed (bar none skipped)
        runtime.send("after the crash")
        assert runtime.wait_idle(30)
        manager.stop_team(team_id)
        after = store.load_events(team_id)
        assert [e.sequence for e in after] == list(range(1, len(after) + 1))
        assert after[: len(events)] == events
    finally:
        system.shutdown(timeout=10)
        store.close()
