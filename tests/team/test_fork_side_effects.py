"""A fork never runs a side effect again: answered calls stay answered, in-flight ones are
reported interrupted, and the resumed fork only does what its model asks anew."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.llm.events import ToolCallEvent, ToolReturnEvent
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.team import SqliteEventStore, TeamCard, TeamCardMember, TeamManager
from akgentic.testing.waiting import wait_until

#: Importable by dotted path (``fork_tools.CountingTool``, from tests/team/support), so
#: that a resumed team finds it.
CountingTool: Any = importlib.import_module("fork_tools").CountingTool


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[TeamManager]:
    system = ActorSystem()
    store = SqliteEventStore(tmp_path / "teams.db")
    teams = TeamManager(system, store)
    yield teams
    teams.stop_all()
    system.shutdown(timeout=10)
    store.close()


def _card(server: ScriptedLLMServer, tool: Any) -> TeamCard:
    return TeamCard(
        name="counters",
        entry_point=TeamCardMember(
            card=AgentCard(
                description="The human",
                agent_class=HumanProxy,
                config=BaseConfig(name="@Human", role="Human"),
            )
        ),
        members=[
            TeamCardMember(
                card=AgentCard(
                    description="Counts",
                    agent_class=BaseAgent,
                    config=AgentConfig(
                        name="@Worker",
                        role="Worker",
                        model_cfg=server.model_config(),
                        tools=[tool],
                    ),
                )
            )
        ],
        message_types=[AgentMessage],
    )


def _kinds(manager: TeamManager, team_id: object, kind: type) -> list[int]:
    return [
        e.sequence
        for e in manager.event_store.load_events(team_id)  # type: ignore[arg-type]
        if isinstance(e.event, EventMessage) and isinstance(e.event.event, kind)
    ]


def test_a_call_answered_before_the_fork_point_is_never_run_again(
    manager: TeamManager, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.txt"
    llm_server.add(tool_call("count", {"n": 1}), structured(StructuredOutput()))
    runtime = manager.create_team(_card(llm_server, CountingTool(path=str(calls))))
    runtime.send("Count once.")
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    manager.stop_team(runtime.id)
    assert calls.read_text() == "call 1\n"
    [returned] = _kinds(manager, runtime.id, ToolReturnEvent)
    last = manager.event_store.get_max_sequence(runtime.id)
    for at in (returned, last):
        result = manager.fork_team(runtime.id, at)
        assert result.interrupted == []
        served = llm_server.served
        llm_server.add(structured(StructuredOutput()))
        fork = manager.resume_team(result.team_id)
        fork.send("Anything else?")
        wanted = served + 1
        wait_until(lambda: llm_server.served == wanted, timeout=30)  # noqa: B023 - read now
        assert fork.wait_idle(timeout=30)
        manager.stop_team(fork.id)
        history = json.dumps(llm_server.requests[-1]["messages"])
        assert history.count("counted 1") == 1  # the answer is in the fork's history, once
        assert calls.read_text() == "call 1\n"  # and the call was not made again


def test_a_call_in_flight_at_the_fork_point_is_reported_interrupted_not_rerun(
    manager: TeamManager, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    calls, hold = tmp_path / "calls.txt", tmp_path / "release"
    llm_server.add(tool_call("count", {"n": 7}), structured(StructuredOutput()))
    runtime = manager.create_team(_card(llm_server, CountingTool(path=str(calls), hold=str(hold))))
    runtime.send("Count.")
    wait_until(calls.exists, timeout=30)  # the tool runs, and waits for `hold`
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None
    persistence.flush(30)
    at = manager.event_store.get_max_sequence(runtime.id)
    [called] = _kinds(manager, runtime.id, ToolCallEvent)
    assert called <= at and _kinds(manager, runtime.id, ToolReturnEvent) == []

    result = manager.fork_team(runtime.id, at, name="what-if")  # of the running team
    assert len(result.interrupted) == 1 and result.interrupted[0].startswith("@Worker: count")

    hold.touch()  # the parent goes on and finishes its call
    wait_until(lambda: llm_server.served == 2, timeout=30)
    assert runtime.wait_idle(timeout=30)
    manager.stop_team(runtime.id)
    assert len(_kinds(manager, runtime.id, ToolReturnEvent)) == 1

    llm_server.add(structured(StructuredOutput()))
    fork = manager.resume_team(result.team_id)
    fork.send("What happened to the count?")
    wait_until(lambda: llm_server.served == 3, timeout=30)
    assert fork.wait_idle(timeout=30)
    manager.stop_team(fork.id)
    history = json.dumps(llm_server.requests[2]["messages"])
    assert "interrupted by a fork of the team" in history
    assert calls.read_text() == "call 7\n"  # made once, by the parent; never by the fork
    record = manager.get_team(result.team_id)
    assert record is not None and record.name == "what-if"
    assert record.lineage.parent_id == runtime.id and record.lineage.parent_sequence == at
