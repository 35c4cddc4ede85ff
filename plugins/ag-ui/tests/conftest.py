"""Fixtures of the ag-ui tests: a console serving a team on a scripted model, and a reader.

The scripted manager (as in the console's own tests) answers the human:

- ``ask me`` in a request: a question to the human;
- ``plan the report``: puts two tasks on the planning board (a tool call), then
  answers ``Planned 2 tasks``; with ``slowly`` in the request, the model's second
  answer waits until the test opens :attr:`Script.gate`;
- a response from the human: ``Noted: <answer>``;
- anything else: ``Echo: <text>``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.testing.cards import human_worker_team_yaml
from akgentic.testing.scripted import last_received

QUESTION = "Which colour should the report be?"
PLAN = {
    "update": {
        "create_tasks": [
            {"id": 1, "description": "draft the report", "owner": "@Manager"},
            {"id": 2, "description": "review the report", "owner": "@Human", "dependencies": [1]},
        ]
    }
}


class Script:
    """The manager's model (see the module docstring)."""

    def __init__(self) -> None:
        self.gate = threading.Event()

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
                if "slowly" in content:
                    self.gate.wait(60)
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


def team_card(server: ScriptedLLMServer) -> str:
    """A manager who answers the human, with the planning card, its model on ``server``."""
    return human_worker_team_yaml(
        "ag-ui-team",
        description="A manager who answers the human",
        human_description="The person at the AG-UI client",
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
        tools=[{"card": "planning", "vector_store": False}],
    )


@dataclass
class Served:
    """A console with one team: its client (with the token), the team's id, the script."""

    server: Any
    client: httpx.Client
    team_id: str
    script: Script
    directory: Path
    question: str = QUESTION
    plan: Any = None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from akgentic.testing.console import running_console

    directory = tmp_path_factory.mktemp("agui")
    script = Script()
    store = f"sqlite:///{directory}/console.db"
    with ScriptedLLMServer(fallback=script) as llm, running_console(store) as (server, client):
        created = client.post("/api/teams", json={"card": team_card(llm)})
        assert created.status_code == 201, created.text
        team_id = created.json()["team_id"]
        try:
            yield Served(server, client, team_id, script, directory, plan=PLAN)
        finally:
            script.gate.set()
