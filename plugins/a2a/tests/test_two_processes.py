"""Team A hires team B over A2A, each served by its own ``akgentic serve`` process.

A's process is killed (SIGKILL) while B works on A's task, and resumed: A polls the
task it had recorded instead of sending it again, so B receives it exactly once, and
A still gets the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.team.urls import open_event_store
from akgentic.testing.console import ServeProcess
from akgentic.testing.waiting import wait_until

from .conftest import EchoScript, echo_card
from .test_remote import TOKEN_VAR, remote_team_card


def _messages(client: httpx.Client, team_id: str) -> list[dict[str, Any]]:
    rows = client.get(f"/api/teams/{team_id}/events", params={"kind": "message", "limit": 1000})
    rows.raise_for_status()
    return list(rows.json()["events"])


def _recorded_task_id(store_url: str, team_id: str) -> str | None:
    store = open_event_store(store_url)
    try:
        for snapshot in store.load_agent_states(UUID(team_id)):
            pending = getattr(snapshot.state, "pending", None) or []
            if pending and pending[0].task_id:
                return str(pending[0].task_id)
        return None
    finally:
        store.close()


@pytest.mark.timeout(300)
def test_a_killed_hiring_team_resumes_and_b_gets_the_task_once(
    tmp_path: Path, llm: ScriptedLLMServer, script: EchoScript
) -> None:
    store_a = f"sqlite:///{tmp_path / 'a.db'}"
    store_b = f"sqlite:///{tmp_path / 'b.db'}"
    with ServeProcess(store_b, str(tmp_path)) as b, b.client() as client_b:
        team_b = client_b.post("/api/teams", json={"card": echo_card(llm, "team-b")})
        assert team_b.status_code == 201, team_b.text
        b_id = team_b.json()["team_id"]
        url_b = f"{b.url}a2a/{b_id}"
        env = {TOKEN_VAR: f"Bearer {b.token}"}
        with ServeProcess(store_a, str(tmp_path), env=env) as a, a.client() as client_a:
            team_a = client_a.post("/api/teams", json={"card": remote_team_card(url_b)})
            assert team_a.status_code == 201, team_a.text
            a_id = team_a.json()["team_id"]
            sent = client_a.post(f"/api/teams/{a_id}/messages", json={"text": "hold the line"})
            assert sent.is_success
            assert script.holding.wait(60), "B never started on A's task"
            wait_until(lambda: _recorded_task_id(store_a, a_id) is not None, timeout=60)
            a.process.kill()  # SIGKILL, while B works on the task
            a.process.wait(30)
        with ServeProcess(store_a, str(tmp_path), env=env) as a2, a2.client() as client_a:
            resumed = client_a.post(f"/api/teams/{a_id}/resume")
            assert resumed.status_code == 200, resumed.text
            script.release.set()
            wait_until(
                lambda: any(
                    r["to_human"] and r["content"] == "Echo: hold the line"
                    for r in _messages(client_a, a_id)
                ),
                timeout=120,
            )
        turns = [r for r in _messages(client_b, b_id) if r["message_type"] == "A2ATurn"]
        assert len(turns) == 1, turns
        assert script.held == 1
