"""Fixtures of the A2A tests: a scripted model, a team on it, a console serving it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.testing.cards import human_worker_team_yaml
from akgentic.testing.scripted import last_received

QUESTION = "Which colour should the report be?"


class EchoScript:
    """The worker's model: echoes requests, asks the human when told ``ask me``.

    - a request containing ``ask me``: a request back to its sender (a question);
    - a request containing ``hold``: waits until :attr:`release` is set, then echoes
      (and counts it in :attr:`held`);
    - a response: ``Noted: <answer>`` back to its sender;
    - any other request: ``Echo: <text>`` back to its sender.
    """

    def __init__(self) -> None:
        self.release = threading.Event()
        self.holding = threading.Event()
        self.held = 0

    def __call__(self, body: dict[str, Any]) -> ScriptStep:
        from akgentic.agent.output_models import Request, StructuredOutput
        from akgentic.llm.scripted_server import structured

        latest = last_received(body)
        requests: list[Request] = []
        if latest is not None:
            intent, sender, content = latest
            if intent == "request" and "ask me" in content:
                requests.append(Request(recipient=sender, message_type="request", message=QUESTION))
            elif intent == "response":
                requests.append(
                    Request(recipient=sender, message_type="response", message=f"Noted: {content}")
                )
            elif intent == "request":
                if "hold" in content:
                    self.held += 1
                    self.holding.set()
                    self.release.wait(120)
                requests.append(
                    Request(recipient=sender, message_type="response", message=f"Echo: {content}")
                )
        return structured(StructuredOutput(messages=requests))


def echo_card(server: ScriptedLLMServer, name: str = "a2a-team") -> str:
    """A team entered by ``@Human`` whose ``@Worker`` runs :class:`EchoScript` on ``server``."""
    return human_worker_team_yaml(
        name,
        description="A worker who echoes what it is asked",
        human_description="The person (or A2A client) talking to the team",
        worker="@Worker",
        role="Echoer",
        worker_description="Echoes every request and asks when told to",
        prompt="You echo.",
        model_cfg={
            "provider": "openai-chat",
            "model": server.model,
            "base_url": server.base_url,
            "api_key": "scripted",
        },
    )


@pytest.fixture
def script() -> EchoScript:
    """The worker's rules (its ``release`` lets a held turn finish)."""
    return EchoScript()


@pytest.fixture
def llm(script: EchoScript) -> Iterator[ScriptedLLMServer]:
    """A scripted OpenAI-compatible server playing ``script``."""
    with ScriptedLLMServer(fallback=script) as server:
        yield server
    script.release.set()


@pytest.fixture
def with_a2a(register_plugin: Any) -> None:
    """The SQLite store and the a2a plugin, alone in an isolated plugin host."""
    import akgentic_a2a.plugin

    from akgentic.builtin import agent, core, mailbox_tool, sqlite_store, team_tool

    for module, name in (
        (core, "core"),
        (agent, "agent"),
        (sqlite_store, "sqlite"),
        (team_tool, "team_tool"),
        (mailbox_tool, "mailbox_tool"),
        (akgentic_a2a.plugin, "a2a"),
    ):
        register_plugin(module, name)
