"""examples/planning-team.yaml runs offline, its models replaced by the scripted server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_planning import PLANNING_ACTOR_NAME

from akgentic.agent import StructuredOutput
from akgentic.agent.output_models import Request
from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.waiting import wait_until

team_api = pytest.importorskip("akgentic.team")
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "planning-team.yaml"


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[Any]:
    system = ActorSystem()
    store = team_api.open_event_store(f"yaml:///{tmp_path}/store")
    teams = team_api.TeamManager(actor_system=system, event_store=store)
    yield teams
    teams.stop_all()
    system.shutdown(timeout=10)
    store.close()


def _offline(card: Any, server: ScriptedLLMServer) -> Any:
    data = card.model_dump()
    for member in data["members"]:
        member["card"]["config"]["model_cfg"] = server.model_config().model_dump()
    return type(card).model_validate(data)


def test_the_example_team_plans_and_the_worker_picks_its_task(
    manager: Any, llm_server: ScriptedLLMServer
) -> None:
    card = _offline(team_api.load_team_card(EXAMPLE), llm_server)
    plan = {
        "update": {
            "create_tasks": [
                {"id": 1, "description": "collect the figures", "owner": "@Worker"},
                {"id": 2, "description": "write the summary", "owner": "@Worker"},
            ]
        }
    }
    start = {"update": {"update_tasks": [{"id": 1, "status": "started"}]}}
    go = Request(message_type="instruction", message="Start on task 1.", recipient="@Worker")
    llm_server.add(
        tool_call("update_planning", plan),
        structured(StructuredOutput(messages=[go])),
        tool_call("update_planning", start),
        structured(StructuredOutput()),
    )
    llm_server.fallback = structured(StructuredOutput())
    runtime = manager.create_team(card)
    runtime.send_to("@Manager", "Prepare the quarterly report.")
    wait_until(lambda: llm_server.served == 4, timeout=30)
    assert runtime.wait_idle(timeout=30)
    worker_view = json.dumps(llm_server.requests[2]["messages"], ensure_ascii=False)
    assert "- ID 1 [pending] collect the figures (Owner: @Worker, Creator: @Manager)" in (
        worker_view
    )
    (address,) = [m for m in runtime.orchestrator_proxy.get_team() if m.name == PLANNING_ACTOR_NAME]
    board = ProxyWrapper(address, timeout=30)
    assert [(t.id, t.status) for t in board.get_tasks()] == [(1, "started"), (2, "pending")]
