"""Through the team runtime: create, talk, stop, resume; the conversation survives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.llm.scripted_server import ScriptedLLMServer, structured

team_api = pytest.importorskip("akgentic.team")


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[Any]:
    system = ActorSystem()
    store = team_api.open_event_store(f"yaml:///{tmp_path}/store")
    teams = team_api.TeamManager(actor_system=system, event_store=store)
    yield teams
    teams.stop_all()
    system.shutdown(timeout=5)
    store.close()


def test_after_resume_the_next_request_holds_the_earlier_conversation_once(
    manager: Any, llm_server: ScriptedLLMServer, helpers: Any
) -> None:
    llm_server.add(structured(StructuredOutput()), structured(StructuredOutput()))
    card = team_api.TeamCard(
        name="writers",
        description="One writer and a human",
        entry_point=team_api.TeamCardMember(
            card=AgentCard(
                description="The human",
                agent_class=HumanProxy,
                config=BaseConfig(name="@Human", role="Human"),
            )
        ),
        members=[
            team_api.TeamCardMember(
                card=AgentCard(
                    description="Writes",
                    agent_class=BaseAgent,
                    config=AgentConfig(
                        name="@Writer", role="Writer", model_cfg=llm_server.model_config()
                    ),
                )
            )
        ],
        message_types=[AgentMessage],
    )
    runtime = manager.create_team(card)
    runtime.send("Remember the word PARSNIP.")
    helpers.wait_for(lambda: llm_server.served == 1, timeout=30)
    assert runtime.wait_idle(timeout=30)
    manager.stop_team(runtime.id)

    resumed = manager.resume_team(runtime.id)
    resumed.send("Which word?")
    helpers.wait_for(lambda: llm_server.served == 2, timeout=30)
    assert resumed.wait_idle(timeout=30)
    assert len(llm_server.requests) == 2
    history = json.dumps(llm_server.requests[1]["messages"])
    assert history.count("Remember the word PARSNIP.") == 1
    assert "Which word?" in history
