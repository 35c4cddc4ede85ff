"""The catalog's tool panes: planning board, knowledge graph, workspace tree and viewer."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from akgentic.console.panes import PaneSource, clean_blocks, team_panes
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.plugins import get_host
from akgentic.tool.core.event import ToolStateEvent

BARE_CARD = """\
name: bare-team
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The human
    config: {name: "@Human", role: Human}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: Works
      config:
        name: "@Worker"
        role: Worker
        model_cfg: {provider: openai, model: gpt-4.1-mini}
        tools:
          - card: %s
message_types:
  - akgentic.agent.AgentMessage
"""


def _plugin(module: str) -> Any:
    """A plugin's module (plugins are separate distributions: imported by name)."""
    return importlib.import_module(module)


def _team(card: str) -> Any:
    from akgentic.team.card_yaml import parse_team_card

    return parse_team_card(BARE_CARD % card, "bare-team.yaml")


def _tool_event(tool: str, seq: int, payload: Any) -> EventMessage:
    return EventMessage(event=ToolStateEvent(tool_id=tool, seq=seq, payload=payload))


def _pane(panes: list[dict[str, Any]], card: str) -> dict[str, Any]:
    return next(p for p in panes if p["card"] == card)


# -- planning ---------------------------------------------------------------------


def test_the_planning_pane_groups_tasks_by_status_with_owner_and_dependencies() -> None:
    planning = _plugin("akgentic_planning.models")

    from akgentic.team.models import AgentStateSnapshot

    team_id = uuid4()
    snapshot = AgentStateSnapshot(
        team_id=team_id,
        agent_id="p",
        name="#PlanningTool",
        state=planning.PlanManagerState(
            task_list=[planning.Task(id=1, description="<b>draft</b>", owner="@Worker")],
            snapshot_seq=1,
        ),
    )
    events = [
        _tool_event(
            "#PlanningTool", 1, planning.PlanningStateEvent(tasks_added=[planning.Task(id=9)])
        ),  # in snapshot
        _tool_event(
            "#PlanningTool",
            2,
            planning.PlanningStateEvent(
                tasks_added=[
                    planning.Task(id=2, description="review", dependencies=[1], status="started")
                ]
            ),
        ),
        _tool_event(
            "#PlanningTool",
            3,
            planning.PlanningStateEvent(
                tasks_modified=[
                    planning.Task(
                        id=1, description="<b>draft</b>", owner="@Worker", status="completed"
                    )
                ]
            ),
        ),
    ]
    panes = team_panes(team_id, _team("planning"), [snapshot], get_host().registry, events)
    pane = _pane(panes, "planning")
    assert pane["source"] == "plugin"
    blocks = pane["blocks"]
    assert [b["text"] for b in blocks if b["kind"] == "text"] == ["started · 1", "completed · 1"]
    tables = [b["rows"] for b in blocks if b["kind"] == "table"]
    assert tables == [
        [["#2", "review", "(unassigned)", "#1", ""]],
        [["#1", "<b>draft</b>", "@Worker", "—", ""]],
    ]


def test_a_planning_pane_without_tasks_says_so() -> None:
    panes = team_panes(uuid4(), _team("planning"), [], get_host().registry)
    assert _pane(panes, "planning")["blocks"] == [
        {"kind": "text", "text": "The board has no task yet."}
    ]


# -- knowledge graph --------------------------------------------------------------


def test_the_graph_pane_draws_entities_and_relations_from_snapshot_and_events() -> None:
    kg = _plugin("akgentic_knowledge_graph.models")

    from akgentic.team.models import AgentStateSnapshot

    team_id = uuid4()
    alice = kg.Entity(
        name="Alice", entity_type="person", observations=["likes <script>tea</script>"]
    )
    acme = kg.Entity(name="Acme", entity_type="company")
    gone = kg.Entity(name="Gone", entity_type="thing")
    snapshot = AgentStateSnapshot(
        team_id=team_id,
        agent_id="kg",
        name="#KnowledgeGraphTool",
        state=kg.KnowledgeGraphState(
            knowledge_graph=kg.KnowledgeGraph(entities=[alice, gone]), snapshot_seq=4
        ),
    )
    events = [
        _tool_event(
            "#KnowledgeGraphTool",
            5,
            kg.KnowledgeGraphStateEvent(
                entities_added=[acme],
                entities_removed=[gone.id],
                relations_added=[
                    kg.Relation(from_entity="Alice", to_entity="Acme", relation_type="works_at")
                ],
            ),
        )
    ]
    panes = team_panes(team_id, _team("knowledge_graph"), [snapshot], get_host().registry, events)
    blocks = _pane(panes, "knowledge_graph")["blocks"]
    graph = next(b for b in blocks if b["kind"] == "graph")
    assert [n["id"] for n in graph["nodes"]] == ["Alice", "Acme"]
    assert graph["nodes"][0]["text"] == "likes <script>tea</script>"
    assert graph["edges"] == [{"source": "Alice", "target": "Acme", "label": "works_at"}]
    assert blocks[0]["text"] == "2 entities · 1 relations"


def test_graph_edges_to_unknown_nodes_and_odd_values_are_cleaned() -> None:
    cleaned = clean_blocks(
        [
            {
                "kind": "graph",
                "nodes": [{"id": "a", "label": 3}, "junk"],
                "edges": [{"source": "a", "target": "a"}, {"source": "a", "target": "zz"}],
            },
            {"kind": "tree", "items": [{"key": "x", "label": "x", "depth": 99, "openable": "yes"}]},
        ]
    )
    graph, tree = cleaned
    assert graph["nodes"] == [
        {"id": "a", "label": "3", "group": "", "text": ""},
        {"id": "", "label": "", "group": "", "text": ""},
    ]
    assert graph["edges"] == [{"source": "a", "target": "a", "label": ""}]
    assert tree["items"] == [{"key": "x", "label": "x", "depth": 0, "openable": False}]


# -- workspace --------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Any]]:
    """A tree under a workspaces root, bound to the team by a stored event; a secret beside it."""
    params = _plugin("akgentic_workspace.params")

    root = tmp_path / "workspaces"
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(root))
    tree = root / "anonymous" / "_team" / "t1"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "main.py").write_text("print('<b>hi</b>')\n")
    (tree / "notes.txt").write_text("first line\n")
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show")
    os.symlink(secret, tree / "leak.txt")
    os.symlink(tmp_path, tree / "outside")
    os.symlink(tree / "notes.txt", tree / "alias.txt")
    attached = EventMessage(
        event=params.WorkspaceAttached(agent_id=uuid4(), workspace_path="anonymous/_team/t1")
    )
    return tree, [attached]


def _source(events: list[Any]) -> PaneSource:
    return PaneSource(team_id=uuid4(), events=events)


def test_the_workspace_pane_lists_the_tree_and_marks_links_unopenable(
    workspace: tuple[Path, list[Any]],
) -> None:
    _tree, events = workspace
    panes = team_panes(uuid4(), _team("workspace"), [], get_host().registry, events)
    pane = _pane(panes, "workspace")
    assert pane["openable"] is True
    tree = next(b for b in pane["blocks"] if b["kind"] == "tree")
    keys = [i["key"] for i in tree["items"]]
    assert keys.index("0:src") + 1 == keys.index("0:src/main.py")  # entries under their dir
    items = {i["key"]: i for i in tree["items"]}
    assert items["0:src/main.py"]["openable"] is True
    assert items["0:src/main.py"]["depth"] == 1
    assert items["0:notes.txt"]["openable"] is True
    # The viewer never follows a link, even one that stays inside the tree.
    assert items["0:alias.txt"]["openable"] is False
    assert items["0:leak.txt"]["openable"] is False
    assert items["0:leak.txt"]["label"] == "leak.txt -> (link)"
    assert items["0:src"]["openable"] is False


def test_the_file_viewer_shows_a_file_as_text(workspace: tuple[Path, list[Any]]) -> None:
    open_workspace_item = _plugin("akgentic_workspace.console_pane").open_workspace_item

    _tree, events = workspace
    assert (
        open_workspace_item(_source(events), "0:src/main.py")[1]["text"] == "print('<b>hi</b>')\n"
    )
    assert "binary file, 3 bytes" in open_workspace_item(_source(events), "0:blob.bin")[0]["text"]


@pytest.mark.parametrize(
    "key",
    [
        "0:../secret.txt",
        "0:src/../../secret.txt",
        "0:leak.txt",
        "0:outside/secret.txt",
        "0:/etc/passwd",
        "0:\x00",
    ],
)
def test_the_file_viewer_refuses_paths_leaving_the_tree(
    workspace: tuple[Path, list[Any]], key: str
) -> None:
    open_workspace_item = _plugin("akgentic_workspace.console_pane").open_workspace_item

    _tree, events = workspace
    with pytest.raises(ValueError):
        open_workspace_item(_source(events), key)


def test_the_file_viewer_reports_missing_items(workspace: tuple[Path, list[Any]]) -> None:
    open_workspace_item = _plugin("akgentic_workspace.console_pane").open_workspace_item

    _tree, events = workspace
    for key in ("0:nope.txt", "0:src", "7:notes.txt", "notes.txt"):
        with pytest.raises(LookupError):
            open_workspace_item(_source(events), key)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_workspace_pane_shows_the_journal(workspace: tuple[Path, list[Any]]) -> None:
    tree, events = workspace
    git_dir = tree.with_name("t1.git")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "@Worker",
        "GIT_AUTHOR_EMAIL": "w@akgentic",
        "GIT_COMMITTER_NAME": "@Worker",
        "GIT_COMMITTER_EMAIL": "w@akgentic",
    }
    git = ["git", f"--git-dir={git_dir}", f"--work-tree={tree}"]
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env=env)
    subprocess.run([*git, "add", "notes.txt"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "write notes.txt"], check=True, env=env)
    panes = team_panes(uuid4(), _team("workspace"), [], get_host().registry, events)
    blocks = _pane(panes, "workspace")["blocks"]
    journal = next(b for b in blocks if b["kind"] == "table")
    assert journal["columns"] == ["commit", "author", "date", "change"]
    assert [row[1:2] + row[3:] for row in journal["rows"]] == [["@Worker", "write notes.txt"]]


def test_the_item_api_refuses_a_path_out_of_the_tree_and_serves_one_inside(
    workspace: tuple[Path, list[Any]], store_url: str
) -> None:
    from datetime import UTC, datetime

    from akgentic.team.models import PersistedEvent, Process, TeamStatus
    from akgentic.testing.console import running_console

    _tree, events = workspace
    now = datetime.now(UTC)
    process = Process(
        team_id=uuid4(),
        team_card=_team("workspace"),
        status=TeamStatus.STOPPED,
        user_id="alice",
        user_email="alice@example.org",
        created_at=now,
        updated_at=now,
    )
    with running_console(store_url) as (console, client):
        assert console.console is not None
        store = console.console.service.manager.event_store
        store.save_team(process)
        for number, event in enumerate(events, start=1):
            store.save_event(PersistedEvent(team_id=process.team_id, sequence=number, event=event))
        base = f"/api/teams/{process.team_id}/panes/workspace/item"
        served = client.get(base, params={"key": "0:notes.txt"})
        assert served.status_code == 200
        assert served.json()["blocks"][1]["text"] == "first line\n"
        for key in ("0:../secret.txt", "0:leak.txt", "0:/etc/passwd"):
            refused = client.get(base, params={"key": key})
            assert refused.status_code == 400, key
            assert "do not show" not in refused.text
        assert client.get(base, params={"key": "0:missing"}).status_code == 404
        other = client.get(f"/api/teams/{process.team_id}/panes/planning/item", params={"key": "x"})
        assert other.status_code == 404
