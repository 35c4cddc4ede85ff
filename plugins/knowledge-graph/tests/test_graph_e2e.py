"""End to end with the scripted server: the model builds and searches the graph; resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_knowledge_graph import GRAPH_ACTOR_NAME, KnowledgeGraphTool, SearchQuery

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.waiting import wait_until
from akgentic.vector import VectorStoreParam

team_api = pytest.importorskip("akgentic.team")

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)
UPDATE = {
    "update": {
        "create_entities": [
            {"name": "Alice", "entity_type": "person", "description": "runs the mailing list"},
            {"name": "Acme", "entity_type": "company", "description": "employer", "is_root": True},
        ],
        "create_relations": [
            {"from_entity": "Alice", "to_entity": "Acme", "relation_type": "works_at"}
        ],
    }
}
SEARCH = {"query": {"query": "mailing", "mode": "keyword", "include_edges": True}}


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"yaml:///{tmp_path}/store"


@pytest.fixture
def manager(store_url: str) -> Iterator[Any]:
    system = ActorSystem()
    store = team_api.open_event_store(store_url)
    teams = team_api.TeamManager(actor_system=system, event_store=store)
    yield teams
    teams.stop_all()
    system.shutdown(timeout=10)
    store.close()


def _card(server: ScriptedLLMServer) -> Any:
    human = AgentCard(
        description="The human",
        agent_class=HumanProxy,
        config=BaseConfig(name="@Human", role="Human"),
    )
    scribe = AgentCard(
        description="Keeps the team's knowledge graph",
        agent_class=BaseAgent,
        config=AgentConfig(
            name="@Scribe",
            role="Scribe",
            model_cfg=server.model_config(),
            tools=[KnowledgeGraphTool(vector_store=HASHING, search_score_threshold=0.0)],
        ),
    )
    return team_api.TeamCard(
        name="scribes",
        description="One agent keeping a knowledge graph",
        entry_point=team_api.TeamCardMember(card=human),
        members=[team_api.TeamCardMember(card=scribe)],
        message_types=[AgentMessage],
    )


def _graph(runtime: Any) -> Any:
    (address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == GRAPH_ACTOR_NAME]
    return ProxyWrapper(address, timeout=30)


_RESUME = """
import json, sys
from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
import akgentic.team as team_api
from akgentic_knowledge_graph import ManageGraph, SearchQuery

store_url, team_id = sys.argv[1], sys.argv[2]
system = ActorSystem()
store = team_api.open_event_store(store_url)
teams = team_api.TeamManager(actor_system=system, event_store=store)
runtime = teams.resume_team(team_id)
(address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == "#KnowledgeGraphTool"]
graph = ProxyWrapper(address, timeout=30)
view = graph.get_graph(None)
out = {
    "entities": [e.name for e in view.entities],
    "relations": [[r.from_entity, r.relation_type, r.to_entity] for r in view.relations],
    "vector": graph.search(SearchQuery(query="Alice: runs the mailing list", mode="vector")),
    "seq_before": graph.state.state_event_seq,
}
graph.update_graph(ManageGraph.model_validate({"delete_entities": ["Acme"]}))
out["seq_after"] = graph.state.state_event_seq
teams.stop_team(runtime.id)
system.shutdown(timeout=10)
store.close()
print(json.dumps(out))
"""


def test_the_model_builds_the_graph_finds_it_by_a_word_and_it_survives_a_new_process(
    manager: Any, llm_server: ScriptedLLMServer, store_url: str, tmp_path: Path
) -> None:
    llm_server.add(
        tool_call("update_graph", UPDATE),
        tool_call("search_graph", SEARCH),
        structured(StructuredOutput()),
    )
    llm_server.fallback = structured(StructuredOutput())
    runtime = manager.create_team(_card(llm_server))
    runtime.send_to("@Scribe", "Record that Alice runs the mailing list at Acme.")
    wait_until(lambda: llm_server.served == 3, timeout=30)
    assert runtime.wait_idle(timeout=30)
    seen = json.dumps(llm_server.requests[2]["messages"], ensure_ascii=False)
    assert "[entity] Alice (person): runs the mailing list (score: 1.00)" in seen
    assert "Connected relations:" in seen and "Alice --[works_at]--> Acme" in seen
    graph = _graph(runtime)
    expected_vector = graph.search(SearchQuery(query="Alice: runs the mailing list", mode="vector"))
    assert graph.state.state_event_seq == 1
    manager.stop_team(runtime.id)

    script = tmp_path / "resume.py"
    script.write_text(_RESUME)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script), store_url, str(runtime.id)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = json.loads(done.stdout.strip().splitlines()[-1])
    assert resumed["entities"] == ["Alice", "Acme"]
    assert resumed["relations"] == [["Alice", "works_at", "Acme"]]
    assert resumed["vector"] == expected_vector
    assert "[entity] Alice (person)" in resumed["vector"]
    assert (resumed["seq_before"], resumed["seq_after"]) == (1, 2)
