"""A fork's graph is the graph as it was at the fork point, its vector rows its own.

The graph's checkpoint is newer than the fork point, so the fork leaves it out: the
graph replays its own state events up to there and re-embeds its rows, which are kept
per team (the fork starts with none). The parent keeps its whole graph.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_knowledge_graph import GRAPH_ACTOR_NAME, KnowledgeGraphTool, SearchQuery

from akgentic.agent import AgentConfig, BaseAgent, StructuredOutput
from akgentic.core import ActorSystem, AgentCard
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.events import ToolReturnEvent
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.team import TeamManager, open_event_store
from akgentic.testing.teams import human_led_team
from akgentic.testing.waiting import wait_until
from akgentic.vector import VectorStoreParam

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)
DONE = structured(StructuredOutput())


def _entity(name: str, description: str) -> Any:
    return tool_call(
        "update_graph",
        {
            "update": {
                "create_entities": [
                    {"name": name, "entity_type": "person", "description": description}
                ]
            }
        },
    )


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[TeamManager]:
    system = ActorSystem()
    store = open_event_store(f"sqlite:///{tmp_path}/teams.db")
    teams = TeamManager(system, store)
    yield teams
    teams.stop_all()
    system.shutdown(timeout=10)
    store.close()


def _graph(runtime: Any) -> Any:
    (address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == GRAPH_ACTOR_NAME]
    return ProxyWrapper(address, timeout=30)


def _names(runtime: Any) -> list[str]:
    return sorted(e.name for e in _graph(runtime).get_graph(None).entities)


def test_the_fork_has_the_graph_of_its_fork_point_and_rows_of_its_own(
    manager: TeamManager, llm_server: ScriptedLLMServer
) -> None:
    scribe = AgentCard(
        description="Keeps the graph",
        agent_class=BaseAgent,
        config=AgentConfig(
            name="@Scribe",
            role="Scribe",
            model_cfg=llm_server.model_config(),
            tools=[KnowledgeGraphTool(vector_store=HASHING, search_score_threshold=0.0)],
        ),
    )
    llm_server.add(
        _entity("Alice", "runs the mailing list"),
        DONE,
        _entity("Bob", "writes the release notes"),
        DONE,
    )
    runtime = manager.create_team(human_led_team("scribes", "A scribe", scribe))
    runtime.send("Note Alice.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    runtime.send("Note Bob.")
    wait_until(lambda: llm_server.served == 4, timeout=30)
    assert runtime.wait_idle(timeout=30)
    assert _names(runtime) == ["Alice", "Bob"]
    manager.stop_team(runtime.id)

    first_return = next(
        e.sequence
        for e in manager.event_store.load_events(runtime.id)
        if isinstance(e.event, EventMessage) and isinstance(e.event.event, ToolReturnEvent)
    )
    fork = manager.resume_team(manager.fork_team(runtime.id, first_return).team_id)
    assert _names(fork) == ["Alice"]
    found = _graph(fork).search(SearchQuery(query="Alice: runs the mailing list", mode="vector"))
    assert "Alice" in str(found) and "Bob" not in str(found)
    manager.stop_team(fork.id)
    assert _names(manager.resume_team(runtime.id)) == ["Alice", "Bob"]
