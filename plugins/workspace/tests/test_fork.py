"""A fork gets its own copy of each tree as it was at the fork point, with its own history.

Real teams on the scripted server: the parent writes, is forked between two writes (or
while an exec runs), and both go on separately. A tree without a journal, or with a
corrupt one, refuses the fork and nothing is made.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from akgentic_workspace import WorkspaceExec, WorkspaceTool

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent, HumanProxy, StructuredOutput
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.llm.events import ToolReturnEvent
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.team import ForkRefusedError, SqliteEventStore, TeamCard, TeamCardMember, TeamManager
from akgentic.testing.waiting import wait_until

DONE = structured(StructuredOutput())


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[TeamManager]:
    system = ActorSystem()
    store = SqliteEventStore(tmp_path / "teams.db")
    teams = TeamManager(system, store)
    yield teams
    teams.stop_all()
    system.shutdown(timeout=10)
    store.close()


def team_card(server: ScriptedLLMServer, tool: WorkspaceTool) -> TeamCard:
    return TeamCard(
        name="coders",
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
                    description="Writes code",
                    agent_class=BaseAgent,
                    config=AgentConfig(
                        name="@Dev", role="Dev", model_cfg=server.model_config(), tools=[tool]
                    ),
                )
            )
        ],
        message_types=[AgentMessage],
    )


def journal(tree: Path) -> list[str]:
    done = subprocess.run(
        ["git", f"--git-dir={tree.with_name(tree.name + '.git')}", "log", "--reverse",
         "--format=%an %s"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.splitlines()


def files(tree: Path) -> set[str]:
    return {str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()}


def run_turn(manager: TeamManager, runtime: object, server: ScriptedLLMServer, n: int) -> None:
    runtime.send("Go.")  # type: ignore[attr-defined]
    wait_until(lambda: server.served == n, timeout=60)
    assert runtime.wait_idle(timeout=60)  # type: ignore[attr-defined]
    manager.stop_team(runtime.id)  # type: ignore[attr-defined]


def returns(manager: TeamManager, team_id: UUID) -> list[int]:
    return [
        e.sequence
        for e in manager.event_store.load_events(team_id)
        if isinstance(e.event, EventMessage) and isinstance(e.event.event, ToolReturnEvent)
    ]


def test_a_fork_between_two_writes_has_the_first_only_and_a_history_of_its_own(
    manager: TeamManager, llm_server: ScriptedLLMServer, workspaces_root: Path
) -> None:
    llm_server.add(
        tool_call("workspace_write", {"path": "a.txt", "content": "one\n"}),
        tool_call("workspace_write", {"path": "b.txt", "content": "two\n"}),
        DONE,
    )
    runtime = manager.create_team(team_card(llm_server, WorkspaceTool(git_journal=True)))
    run_turn(manager, runtime, llm_server, 3)
    first, _second = returns(manager, runtime.id)
    result = manager.fork_team(runtime.id, first)

    parent = workspaces_root / "cli" / "_team" / str(runtime.id)
    child = workspaces_root / "cli" / "_team" / str(result.team_id)
    assert files(parent) == {".gitignore", "a.txt", "b.txt"}
    assert files(child) == {".gitignore", "a.txt"}
    assert (child / "a.txt").read_text() == "one\n"
    assert (child / "a.txt").stat().st_ino != (parent / "a.txt").stat().st_ino  # a copy
    assert journal(child) == ["akgentic-journal init: .gitignore", "@Dev write: a.txt"]
    assert journal(parent)[-1] == "@Dev write: b.txt"

    llm_server.add(tool_call("workspace_write", {"path": "c.txt", "content": "three\n"}), DONE)
    fork = manager.resume_team(result.team_id)
    run_turn(manager, fork, llm_server, 5)
    assert files(child) == {".gitignore", "a.txt", "c.txt"}
    assert files(parent) == {".gitignore", "a.txt", "b.txt"}
    assert journal(child)[-1] == "@Dev write: c.txt"
    assert journal(parent) == [
        "akgentic-journal init: .gitignore",
        "@Dev write: a.txt",
        "@Dev write: b.txt",
    ]


def test_an_exec_in_flight_is_interrupted_in_a_named_tree_of_its_own_and_never_rerun(
    manager: TeamManager, llm_server: ScriptedLLMServer, workspaces_root: Path
) -> None:
    wait_for_go = "bash -c 'echo run >> runs.txt; while [ ! -e go ]; do sleep 0.05; done'"
    llm_server.add(
        tool_call("workspace_write", {"path": "main.py", "content": "print(1)\n"}),
        tool_call("workspace_exec", {"cmd": wait_for_go}),
        DONE,
    )
    tool = WorkspaceTool(
        workspace_id="coding", git_journal=True, workspace_exec=WorkspaceExec(backend="bwrap")
    )
    runtime = manager.create_team(team_card(llm_server, tool))
    parent = workspaces_root / "cli" / "_id" / "coding"
    runtime.send("Build and run it.")
    wait_until((parent / "runs.txt").exists, timeout=60)  # the run has started
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None
    persistence.flush(30)
    result = manager.fork_team(runtime.id, manager.event_store.get_max_sequence(runtime.id))
    assert [line.split(" (")[0] for line in result.interrupted] == ["@Dev: workspace_exec"]
    (parent / "go").touch()
    wait_until(lambda: llm_server.served == 3, timeout=60)
    assert runtime.wait_idle(timeout=60)
    manager.stop_team(runtime.id)

    child = workspaces_root / "cli" / "_id" / f"coding.fork-{result.team_id.hex[:8]}"
    assert files(child) == {".gitignore", "main.py"}  # the run's changes came after
    record = manager.get_team(result.team_id)
    assert record is not None
    assert f"coding.fork-{result.team_id.hex[:8]}" in json.dumps(record.team_card.to_data())

    llm_server.add(tool_call("workspace_exec", {"cmd": "bash -c 'echo again >> again.txt'"}), DONE)
    fork = manager.resume_team(result.team_id)
    run_turn(manager, fork, llm_server, 5)
    history = json.dumps(llm_server.requests[3]["messages"])
    assert "interrupted by a fork of the team" in history
    assert (parent / "runs.txt").read_text() == "run\n"  # the parent ran it once
    assert not (child / "runs.txt").exists()  # the fork never ran it
    assert (child / "again.txt").read_text() == "again\n"  # its own exec ran in its own tree
    assert not (parent / "again.txt").exists()


def test_a_tree_without_a_journal_refuses_the_fork_and_nothing_is_made(
    manager: TeamManager, llm_server: ScriptedLLMServer, workspaces_root: Path
) -> None:
    llm_server.add(tool_call("workspace_write", {"path": "a.txt", "content": "one\n"}), DONE)
    runtime = manager.create_team(team_card(llm_server, WorkspaceTool(git_journal=False)))
    run_turn(manager, runtime, llm_server, 2)
    before = manager.event_store.stored_team_ids()
    trees = set((workspaces_root / "cli" / "_team").iterdir())
    last = manager.event_store.get_max_sequence(runtime.id)
    with pytest.raises(ForkRefusedError, match=r"'workspace'.*no journal") as refused:
        manager.fork_team(runtime.id, last)
    assert refused.value.card == "workspace"
    assert manager.event_store.stored_team_ids() == before
    assert set((workspaces_root / "cli" / "_team").iterdir()) == trees


def test_a_corrupt_journal_refuses_the_fork_and_nothing_is_made(
    manager: TeamManager, llm_server: ScriptedLLMServer, workspaces_root: Path
) -> None:
    llm_server.add(tool_call("workspace_write", {"path": "a.txt", "content": "one\n"}), DONE)
    runtime = manager.create_team(team_card(llm_server, WorkspaceTool(git_journal=True)))
    run_turn(manager, runtime, llm_server, 2)
    git_dir = workspaces_root / "cli" / "_team" / f"{runtime.id}.git"
    (git_dir / "akgentic-times").write_text("not a commit\n")
    before = manager.event_store.stored_team_ids()
    trees = set((workspaces_root / "cli" / "_team").iterdir())
    last = manager.event_store.get_max_sequence(runtime.id)
    with pytest.raises(ForkRefusedError, match="corrupt"):
        manager.fork_team(runtime.id, last)
    assert manager.event_store.stored_team_ids() == before
    assert set((workspaces_root / "cli" / "_team").iterdir()) == trees
