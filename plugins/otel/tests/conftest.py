"""Fixtures of the otel tests: real teams on the project's scripted OpenAI-compatible server.

The team (``@Human`` enters; ``@Manager`` with the planning card; ``@Researcher``)
runs on one :class:`ScriptedLLMServer` whose rule-based script answers by model name:

- the manager, asked to ``find facts``: a tool call (``update_planning``), then a
  request to ``@Researcher``; the researcher's response: ``Here are the facts`` to the
  human; ``ask me``: a question to the human; the human's answer: ``Noted: <answer>``;
  anything else: ``Echo: <text>``;
- the researcher, asked anything: ``Fact one, two, three`` back to whoever asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from akgentic_otel.testing import OTLPReceiver

from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep
from akgentic.testing.scripted import last_received

MANAGER_MODEL = "manager-model"
RESEARCHER_MODEL = "researcher-model"
QUESTION = "Which colour should the report be?"
PLAN = {"update": {"create_tasks": [{"id": 1, "description": "find facts", "owner": "@Manager"}]}}


def script(body: dict[str, Any]) -> ScriptStep:
    """The model of both members (see the module docstring)."""
    from akgentic.agent.output_models import Request, StructuredOutput
    from akgentic.llm.scripted_server import structured, tool_call

    latest = last_received(body)
    messages = body.get("messages") or [{}]
    after_tool = messages[-1].get("role") == "tool"
    requests: list[Request] = []
    if latest is not None:
        intent, sender, content = latest
        if body.get("model") == RESEARCHER_MODEL:
            requests.append(
                Request(recipient=sender, message_type="response", message="Fact one, two, three")
            )
        elif intent == "request" and "find facts" in content:
            if not after_tool:
                return tool_call("update_planning", PLAN)
            requests.append(
                Request(recipient="@Researcher", message_type="request", message="Find 3 facts")
            )
        elif intent == "response" and sender == "@Researcher":
            requests.append(
                Request(recipient="@Human", message_type="response", message="Here are the facts")
            )
        elif intent == "request" and "ask me" in content:
            requests.append(Request(recipient=sender, message_type="request", message=QUESTION))
        elif intent == "response":
            requests.append(
                Request(recipient=sender, message_type="response", message=f"Noted: {content}")
            )
        else:
            requests.append(
                Request(recipient=sender, message_type="response", message=f"Echo: {content}")
            )
    return structured(StructuredOutput(messages=requests))


def team_card(server: ScriptedLLMServer) -> str:
    """The card of the test team, both members' models on ``server``."""

    def member(name: str, role: str, model: str, tools: str = "") -> str:
        return (
            "  - card:\n"
            "      agent_class: akgentic.agent.BaseAgent\n"
            f"      description: {role}\n"
            "      config:\n"
            f'        name: "{name}"\n'
            f"        role: {role}\n"
            f'        prompt: {{template: "You are the {role.lower()}."}}\n'
            f"        model_cfg: {{provider: openai-chat, model: {model}, "
            f"base_url: '{server.base_url}', api_key: scripted}}\n" + tools
        )

    planning = "        tools:\n          - card: planning\n            vector_store: false\n"
    return (
        "name: trace-team\n"
        "description: A manager and a researcher\n"
        "entry_point:\n"
        "  card:\n"
        "    agent_class: akgentic.agent.HumanProxy\n"
        "    description: The person\n"
        '    config: {name: "@Human", role: Human}\n'
        "members:\n"
        + member("@Manager", "Manager", MANAGER_MODEL, planning)
        + member("@Researcher", "Researcher", RESEARCHER_MODEL)
        + "message_types:\n  - akgentic.agent.AgentMessage\n"
    )


@dataclass(frozen=True)
class StoredRun:
    """A stopped team in a store: two turns (``find facts``, then ``thanks``)."""

    store: str
    team_id: UUID
    directory: Path


def run_turns(store: str, card: str, texts: list[str], timeout: float = 60.0) -> UUID:
    """Create the team of ``card`` in ``store``, send each text to @Manager once idle, stop."""
    from akgentic.plugin_api import ActorSystem, TeamCard, TeamManager, open_event_store

    system = ActorSystem()
    event_store = open_event_store(store)
    try:
        manager = TeamManager(system, event_store)
        runtime = manager.create_team(TeamCard.from_yaml(card))
        for text in texts:
            runtime.send_to("@Manager", text)
            assert runtime.wait_idle(timeout), f"the team did not finish {text!r}"
        manager.stop_team(runtime.id)
        return runtime.id
    finally:
        system.shutdown(timeout=10)
        event_store.close()


@pytest.fixture(scope="session")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(fallback=script) as server:
        yield server


@pytest.fixture(scope="session")
def stored_run(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    directory = tmp_path_factory.mktemp("otel-run")
    store = f"sqlite:///{directory}/akgentic.db"
    team_id = run_turns(store, team_card(llm), ["please find facts", "thanks"])
    return StoredRun(store, team_id, directory)


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    with OTLPReceiver() as started:
        yield started


def cli(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``akgentic ARGS`` in a child process (bounded: a hang fails the test)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("AKGENTIC_", "OTEL_"))}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
