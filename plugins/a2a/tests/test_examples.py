"""The A2A examples: the client script against a served team, and the hiring team's card."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.testing.console import running_console

from .conftest import QUESTION, echo_card

pytestmark = pytest.mark.usefixtures("with_a2a")

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _run(url: str, token: str, text: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "a2a_client.py"), url, token, text],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_client_example_talks_to_a_served_team(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, client):
        team_id = client.post("/api/teams", json={"card": echo_card(llm)}).json()["team_id"]
        url = f"{server.url}a2a/{team_id}"
        done = _run(url, str(server.token), "hello from the example")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "TASK_STATE_COMPLETED: Echo: hello from the example"
        asked = _run(url, str(server.token), "please ask me", stdin="green\n")
        assert asked.returncode == 0, asked.stderr
        assert asked.stdout.splitlines() == [
            f"TASK_STATE_INPUT_REQUIRED: {QUESTION}",
            "TASK_STATE_COMPLETED: Noted: green",
        ]


def test_the_hiring_card_loads_with_a_remote_agent() -> None:
    from akgentic_a2a import RemoteAgent, RemoteConfig

    from akgentic.team.card import TeamCard

    card = TeamCard.from_yaml((EXAMPLES / "a2a-remote-team.yaml").read_text())
    member = card.members[0].card
    assert member.agent_class is RemoteAgent
    assert isinstance(member.config, RemoteConfig)
    assert member.config.headers_env == {"Authorization": "REMOTE_A2A_TOKEN"}


def test_the_example_endpoint_refuses_a_missing_token(tmp_path: Path) -> None:
    with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, _client):
        response = httpx.get(f"{server.url}a2a/", timeout=30)
        assert response.status_code == 401
