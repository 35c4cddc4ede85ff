"""End to end with the scripted OpenAI-compatible server, then a resume in a new process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_planning import PLANNING_ACTOR_NAME, PlanningTool, SearchRequest

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.agent.output_models import Request
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.waiting import wait_until
from akgentic.vector import VectorStoreParam

team_api = pytest.importorskip("akgentic.team")

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)
PLAN = {
    "update": {
        "create_tasks": [
            {"id": 1, "description": "draft the release notes", "owner": "@Manager"},
            {"id": 2, "description": "deploy the web service", "owner": "@Worker"},
            {"id": 3, "description": "announce the release", "owner": ""},
        ]
    }
}


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


def _member(name: str, role: str, server: ScriptedLLMServer) -> Any:
    return team_api.TeamCardMember(
        card=AgentCard(
            description=f"The {role.lower()}",
            agent_class=BaseAgent,
            config=AgentConfig(
                name=name,
                role=role,
                model_cfg=server.model_config(),
                tools=[PlanningTool(vector_store=HASHING, search_score_threshold=0.0)],
            ),
        )
    )


def _card(server: ScriptedLLMServer) -> Any:
    human = AgentCard(
        description="The human",
        agent_class=HumanProxy,
        config=BaseConfig(name="@Human", role="Human"),
    )
    return team_api.TeamCard(
        name="planners",
        description="A manager who plans and a worker who picks tasks",
        entry_point=team_api.TeamCardMember(card=human),
        members=[_member("@Manager", "Manager", server), _member("@Worker", "Worker", server)],
        message_types=[AgentMessage],
    )


def _planning(runtime: Any) -> Any:
    (address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == PLANNING_ACTOR_NAME]
    return ProxyWrapper(address, timeout=30)


def test_a_manager_plans_and_the_assignee_sees_its_task_in_the_context_delta(
    manager: Any, llm_server: ScriptedLLMServer
) -> None:
    handover = Request(message_type="instruction", message="Take task 2.", recipient="@Worker")
    llm_server.add(
        structured(StructuredOutput()),  # the worker's first turn: an empty board
        tool_call("update_planning", PLAN),
        structured(StructuredOutput(messages=[handover])),
        structured(StructuredOutput()),  # the worker's second turn
    )
    runtime = manager.create_team(_card(llm_server))
    runtime.send_to("@Worker", "Stand by for tasks.")
    wait_until(lambda: llm_server.served == 1, timeout=30)
    assert runtime.wait_idle(timeout=30)
    runtime.send_to("@Manager", "Plan the release.")
    wait_until(lambda: llm_server.served == 4, timeout=30)
    assert runtime.wait_idle(timeout=30)

    first = json.dumps(llm_server.requests[0]["messages"], ensure_ascii=False)
    assert "No current team planning." in first
    later = json.dumps(llm_server.requests[3]["messages"], ensure_ascii=False)
    assert "New: ID 2 [pending] deploy the web service (Owner: @Worker, Creator: @Manager)." in (
        later
    )
    # The tool's answer reached the manager's model.
    assert "Done" in json.dumps(llm_server.requests[2]["messages"])
    board = _planning(runtime)
    hits = board.search(SearchRequest(query="deploy", mode="hybrid"))
    assert hits[0].startswith("Task 2: deploy the web service")


_RESUME = """
import json, sys
from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
import akgentic.team as team_api
from akgentic_planning import SearchRequest, TaskUpdate, UpdatePlan

store_url, team_id = sys.argv[1], sys.argv[2]
system = ActorSystem()
store = team_api.open_event_store(store_url)
teams = team_api.TeamManager(actor_system=system, event_store=store)
runtime = teams.resume_team(team_id)
(address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == "#PlanningTool"]
board = ProxyWrapper(address, timeout=30)
before = board.state.state_event_seq
out = {
    "tasks": [[t.id, t.description, t.owner, t.creator] for t in board.get_tasks()],
    "hybrid": board.search(SearchRequest(query="deploy web", mode="hybrid")),
    "vector": board.search(SearchRequest(query="deploy the web service", mode="vector", top_k=1)),
    "seq_before": before,
}
board.update_planning(UpdatePlan(update_tasks=[TaskUpdate(id=2, status="started")]), "@Worker")
out["seq_after"] = board.state.state_event_seq
teams.stop_team(runtime.id)
system.shutdown(timeout=10)
store.close()
print(json.dumps(out))
"""


def test_after_a_resume_in_a_new_process_board_search_and_numbering_continue(
    manager: Any, llm_server: ScriptedLLMServer, store_url: str, tmp_path: Path
) -> None:
    llm_server.add(tool_call("update_planning", PLAN), structured(StructuredOutput()))
    llm_server.fallback = structured(StructuredOutput())
    runtime = manager.create_team(_card(llm_server))
    runtime.send_to("@Manager", "Plan the release.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    board = _planning(runtime)
    expected_tasks = [[t.id, t.description, t.owner, t.creator] for t in board.get_tasks()]
    expected_hybrid = board.search(SearchRequest(query="deploy web", mode="hybrid"))
    assert board.state.state_event_seq == 1
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
    assert resumed["tasks"] == expected_tasks
    assert resumed["hybrid"] == expected_hybrid
    assert resumed["vector"][0].startswith("Task 2: deploy the web service")
    assert " (semantic: " in resumed["vector"][0]  # the vector rows came back
    assert (resumed["seq_before"], resumed["seq_after"]) == (1, 2)
