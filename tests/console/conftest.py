"""Fixtures of the console tests: a scripted model, a team card on it, a console over SQLite."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.testing.cards import human_worker_team_yaml
from akgentic.testing.scripted import last_received

CHROMIUM = "/usr/bin/chromium"
QUESTION = "Which colour should the report be?"
#: The tasks the scripted manager puts on the board when asked to ``plan``.
PLAN = {
    "update": {
        "create_tasks": [
            {"id": 1, "description": "draft the report", "owner": "@Manager"},
            {"id": 2, "description": "review the report", "owner": "@Human", "dependencies": [1]},
        ]
    }
}
#: The tool cards of the console team's manager.
TOOLS: list[dict[str, object]] = [
    {
        "card": "skill",
        "skills": {
            "skills": [
                {
                    "name": "reporting",
                    "description": "How reports are written.",
                    "content": "Short.",
                }
            ]
        },
    },
    {"card": "notification"},
    {"card": "planning", "vector_store": False},
]


def console_card(server: ScriptedLLMServer) -> str:
    """The console team's card: a manager who answers the human, its model on ``server``."""
    return human_worker_team_yaml(
        "console-team",
        description="A manager who answers the human and asks it questions",
        human_description="The person at the console",
        worker="@Manager",
        role="Manager",
        worker_description="Answers the human",
        prompt="You answer the human.",
        model_cfg={
            "provider": "openai-chat",
            "model": server.model,
            "base_url": server.base_url,
            "api_key": "scripted",
        },
        tools=TOOLS,
    )


class ConsoleScript:
    """The manager's model: echoes requests, asks the human when told ``ask me``.

    - a request from the human containing ``ask me``: a request to the human (a question);
    - a request containing ``plan the report``: puts :data:`PLAN` on the planning
      board, then answers ``Planned 2 tasks``;
    - a response from the human: thanks it, quoting the answer;
    - any other request: a response ``Echo: <text>``.
    """

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        from akgentic.agent.output_models import Request, StructuredOutput
        from akgentic.llm.scripted_server import structured, tool_call

        latest = last_received(body)
        messages = body.get("messages") or [{}]
        after_tool = messages[-1].get("role") == "tool"
        requests: list[Request] = []
        if latest is not None:
            intent, sender, content = latest
            if intent == "request" and "plan the report" in content:
                if not after_tool:
                    return tool_call("update_planning", PLAN)
                requests.append(
                    Request(recipient=sender, message_type="response", message="Planned 2 tasks")
                )
            elif intent == "request" and "ask me" in content:
                requests.append(Request(recipient=sender, message_type="request", message=QUESTION))
            elif intent == "response":
                requests.append(
                    Request(recipient=sender, message_type="response", message=f"Noted: {content}")
                )
            elif intent == "request":
                requests.append(
                    Request(recipient=sender, message_type="response", message=f"Echo: {content}")
                )
        return structured(StructuredOutput(messages=requests))


@pytest.fixture
def question() -> str:
    """What the scripted manager asks the human."""
    return QUESTION


@pytest.fixture
def script_server() -> Iterator[ScriptedLLMServer]:
    """A scripted OpenAI-compatible server playing :class:`ConsoleScript`."""
    with ScriptedLLMServer(fallback=ConsoleScript()) as server:
        yield server


@pytest.fixture
def card_text(script_server: ScriptedLLMServer) -> str:
    """The console team's card, its model pointing at ``script_server``."""
    return console_card(script_server)


@pytest.fixture
def card_file(tmp_path: Path, card_text: str) -> Path:
    """The console team's card as a file."""
    path = tmp_path / "console-team.yaml"
    path.write_text(card_text)
    return path


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    """A SQLite store under tmp_path (created by the console)."""
    return f"sqlite:///{tmp_path}/console.db"


@pytest.fixture(scope="module")
def shared_console(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, str, str]]:
    """A console (base URL) over a fresh store with one team that already talked (its id),
    and the console's token."""
    from akgentic.testing.console import StreamReader, running_console

    directory = tmp_path_factory.mktemp("console")
    with ScriptedLLMServer(fallback=ConsoleScript()) as server:
        text = console_card(server)
        with running_console(f"sqlite:///{directory}/console.db") as (console, client):
            team_id = client.post("/api/teams", json={"card": text}).json()["team_id"]
            reader = StreamReader(client, team_id)
            try:
                client.post(f"/api/teams/{team_id}/messages", json={"text": "please ask me"})
                reader.wait_for(lambda row: row["kind"] == "message" and row["to_human"])
            finally:
                reader.close()
            assert console.token is not None
            yield console.url, team_id, console.token


def _chromium_or_skip() -> str:
    if Path(CHROMIUM).exists() or shutil.which("chromium"):
        return CHROMIUM if Path(CHROMIUM).exists() else str(shutil.which("chromium"))
    if os.environ.get("CI") == "true":
        pytest.fail("Chromium is missing in CI (.ci/run installs it with apt-get)")
    pytest.skip("Chromium is not installed (apt-get install chromium)")


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Chromium (the system's, never a downloaded build)."""
    executable = _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-extensions",
                "--no-first-run",
            ],
        )
        try:
            yield browser
        finally:
            browser.close()
