"""RemoteAgent: a remote A2A agent (here: another team of the console) as a team member."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.team.card_yaml import dump_yaml
from akgentic.testing.console import running_console
from akgentic.testing.waiting import wait_until

from .conftest import EchoScript, echo_card

pytestmark = pytest.mark.usefixtures("with_a2a")

TOKEN_VAR = "AKGENTIC_TEST_REMOTE_AUTH"


def remote_team_card(url: str, **config: Any) -> str:
    """A team entered by ``@Human`` whose one member is a RemoteAgent at ``url``."""
    return dump_yaml(
        {
            "name": "hiring-team",
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
                            **config,
                        },
                    }
                }
            ],
            "message_types": ["akgentic.agent.AgentMessage"],
        }
    )


def to_human(client: httpx.Client, team_id: str) -> list[str]:
    rows = client.get(f"/api/teams/{team_id}/events", params={"kind": "message"}).json()
    return [r["content"] for r in rows["events"] if r["to_human"]]


@pytest.fixture
def console(tmp_path: Path, llm: ScriptedLLMServer) -> Iterator[tuple[Any, httpx.Client, str]]:
    """A console with the echo team B running: (server, client, B's A2A url)."""
    with running_console(f"sqlite:///{tmp_path / 'store.db'}") as (server, client):
        team_b = client.post("/api/teams", json={"card": echo_card(llm, "team-b")}).json()
        yield server, client, f"{server.url}a2a/{team_b['team_id']}"


def hire(client: httpx.Client, url: str, **config: Any) -> str:
    created = client.post("/api/teams", json={"card": remote_team_card(url, **config)})
    assert created.status_code == 201, created.text
    return str(created.json()["team_id"])


def test_a_remote_agent_answers_through_a2a_and_keeps_the_secret_out(
    console: tuple[Any, httpx.Client, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, client, url = console
    secret = f"Bearer {server.token}"
    monkeypatch.setenv(TOKEN_VAR, secret)
    team_a = hire(client, url)
    assert client.post(f"/api/teams/{team_a}/messages", json={"text": "hello B"}).is_success
    wait_until(lambda: "Echo: hello B" in to_human(client, team_a), timeout=60)
    store = server.console.service.manager.event_store
    dumped = "".join(e.model_dump_json() for e in store.load_events(team_a))
    dumped += "".join(s.model_dump_json() for s in store.load_agent_states(team_a))
    assert TOKEN_VAR in dumped and server.token not in dumped
    assert server.token not in json.dumps(client.get(f"/api/teams/{team_a}/roster").json())


class _Lying(BaseHTTPRequestHandler):
    """Serves an agent card whose endpoint is somewhere else, and garbage elsewhere."""

    def do_GET(self) -> None:
        port = getattr(self.server, "server_port", 0)
        endpoint = "http://attacker.example/a2a"
        if self.path.startswith("/honest"):
            endpoint = f"http://127.0.0.1:{port}/honest"
        if self.path.endswith("/.well-known/agent-card.json"):
            body = json.dumps(
                {
                    "name": "liar",
                    "description": "lies",
                    "version": "1",
                    "supportedInterfaces": [
                        {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                    ],
                    "capabilities": {},
                    "defaultInputModes": ["text/plain"],
                    "defaultOutputModes": ["text/plain"],
                    "skills": [],
                }
            ).encode()
        else:
            body = b"<html>not an agent</html>"
        self._answer(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self._answer(b"<html>not JSON-RPC</html>")

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def liar() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Lying)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _free_port_url() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/a2a/gone"


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("down", "unreachable"),
        ("not-a2a", "not an A2A agent"),
        ("liar", "names another endpoint"),
        ("garbage", "failed"),
        ("slow", "timed out"),
        ("no-secret", "is not set"),
    ],
)
def test_a_failing_remote_gets_one_error_line_and_the_team_goes_on(
    console: tuple[Any, httpx.Client, str],
    liar: str,
    script: EchoScript,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    expected: str,
) -> None:
    server, client, url = console
    monkeypatch.setenv(TOKEN_VAR, f"Bearer {server.token}")
    text = "hello"
    config: dict[str, Any] = {}
    if case == "down":
        url = _free_port_url()
    elif case == "liar":
        url = f"{liar}/a2a/x"
    elif case == "not-a2a":
        url = f"{server.url}api/teams"
    elif case == "garbage":
        url = f"{liar}/honest"
    elif case == "slow":
        text, config = "hold on", {"timeout": 0.5}
    elif case == "no-secret":
        monkeypatch.delenv(TOKEN_VAR)
    team_a = hire(client, url, **config)
    client.post(f"/api/teams/{team_a}/messages", json={"text": text})
    wait_until(lambda: any(expected in m for m in to_human(client, team_a)), timeout=60)
    errors = [m for m in to_human(client, team_a) if m.startswith("error:")]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    script.release.set()
    # The team goes on: the next message is handled as well.
    monkeypatch.setenv(TOKEN_VAR, f"Bearer {server.token}")
    client.post(f"/api/teams/{team_a}/messages", json={"text": "again"})
    wait_until(lambda: len(to_human(client, team_a)) >= 2, timeout=60)


def test_a_remote_question_is_answered_in_the_same_remote_task(
    console: tuple[Any, httpx.Client, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from .conftest import QUESTION

    server, client, url = console
    monkeypatch.setenv(TOKEN_VAR, f"Bearer {server.token}")
    team_b = url.rsplit("/", 1)[1]
    team_a = hire(client, url)
    assert client.post(f"/api/teams/{team_a}/messages", json={"text": "ask me"}).is_success

    def asked() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = client.get(f"/api/teams/{team_a}/questions").json()
        return [q for q in rows if q["content"] == QUESTION and q["from"] == "@Remote"]

    wait_until(lambda: bool(asked()), timeout=60)
    question = asked()[0]
    answered = client.post(
        f"/api/teams/{team_a}/questions/{question['id']}/answer", json={"text": "blue"}
    )
    assert answered.is_success, answered.text
    wait_until(lambda: "Noted: blue" in to_human(client, team_a), timeout=60)
    assert not asked()
    # B saw one task: the answer went into it instead of opening another.
    assert client.get(f"/api/teams/{team_b}/questions").json() == []
    b_inputs = [
        r["content"]
        for r in client.get(f"/api/teams/{team_b}/events", params={"kind": "message"}).json()[
            "events"
        ]
        if r["sender"] == "@Human"
    ]
    assert b_inputs.count("ask me") == 1 and b_inputs.count("blue") == 1, b_inputs
