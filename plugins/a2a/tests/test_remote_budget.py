"""A remote A2A member counts against its team's budget: requests and wall time."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from akgentic.core.messages.orchestrator import EventMessage
from akgentic.llm.budget_events import BudgetCharged
from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.team.card_yaml import dump_yaml
from akgentic.testing.console import running_console
from akgentic.testing.waiting import wait_until

from .conftest import echo_card

pytestmark = pytest.mark.usefixtures("with_a2a")

TOKEN_VAR = "AKGENTIC_TEST_REMOTE_AUTH"


def budget_team_card(url: str) -> str:
    """``@Human`` and one RemoteAgent at ``url``, under a budget of two requests."""
    return dump_yaml(
        {
            "name": "budget-hiring-team",
            "entry_point": {
                "card": {
                    "agent_class": "akgentic.agent.HumanProxy",
                    "description": "The person",
                    "config": {"name": "@Human", "role": "Human"},
                }
            },
            "members": [
                {
                    "card": {
                        "agent_class": "akgentic_a2a.RemoteAgent",
                        "description": "An echo team served elsewhere",
                        "config": {
                            "name": "@Remote",
                            "role": "Echoer",
                            "url": url,
                            "headers_env": {"Authorization": TOKEN_VAR},
                        },
                    }
                }
            ],
            "message_types": ["akgentic.agent.AgentMessage"],
            "budget": {"requests": 2},
        }
    )


@pytest.fixture
def console(tmp_path: Path, llm: ScriptedLLMServer) -> Iterator[tuple[Any, httpx.Client, str]]:
    """A console with the echo team B running: (server, client, B's A2A url)."""
    with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, client):
        team_b = client.post("/api/teams", json={"card": echo_card(llm, "team-b")}).json()
        yield server, client, f"{server.url}a2a/{team_b['team_id']}"


def to_human(client: httpx.Client, team_id: str) -> list[str]:
    rows = client.get(f"/api/teams/{team_id}/events", params={"kind": "message"}).json()
    return [r["content"] for r in rows["events"] if r["to_human"]]


def echoed(client: httpx.Client, team_id: str, echo: str) -> bool:
    return echo in to_human(client, team_id)


def test_remote_calls_are_charged_and_none_starts_once_the_budget_ran_out(
    console: tuple[Any, httpx.Client, str],
    llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, client, url = console
    monkeypatch.setenv(TOKEN_VAR, f"Bearer {server.token}")
    created = client.post("/api/teams", json={"card": budget_team_card(url)})
    assert created.status_code == 201, created.text
    team_a = str(created.json()["team_id"])
    for text in ("one", "two"):
        assert client.post(f"/api/teams/{team_a}/messages", json={"text": text}).is_success
        wait_until(partial(echoed, client, team_a, f"Echo: {text}"), timeout=60)
    served = llm.served
    assert client.post(f"/api/teams/{team_a}/messages", json={"text": "three"}).is_success
    wait_until(
        lambda: any("team budget is used up" in c for c in to_human(client, team_a)), timeout=60
    )
    assert llm.served == served, "the remote team was called after the budget ran out"
    assert not any("Echo: three" in c for c in to_human(client, team_a))
    store = server.console.service.manager.event_store
    charges = [
        e.event.event
        for e in store.load_events(team_a)
        if isinstance(e.event, EventMessage) and isinstance(e.event.event, BudgetCharged)
    ]
    assert [(c.member, c.requests, c.model) for c in charges] == [("@Remote", 1, "")] * 2
    assert all(c.seconds > 0 for c in charges)
