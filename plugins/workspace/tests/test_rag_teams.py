"""Retrieval inside a real team: the ``local`` rows behind the team's one ``#VectorStore``.

Cards are bound to the team kit's member stand-in (a real actor system, orchestrator,
``#Workspace`` and ``#VectorStore``); no model is involved.

One test holds a job inside its worker by wrapping ``pipeline.read_source`` (the real read
runs once the test releases it), to see which thread and actor runs the job; it does not
verify scheduling under natural load.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from akgentic_workspace import WorkspaceTool
from akgentic_workspace.rag.testing import HASHING, drained, rag_fields

from akgentic.core import EventSubscriber
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.testing.tool_team import ToolTeam
from akgentic.tool.core.factory import ToolFactory
from akgentic.vector.actor import STORE_ACTOR_NAME, VectorStoreChange
from akgentic.vector.param import VectorStoreParam


class Changes(EventSubscriber):
    """Every ``VectorStoreChange`` the orchestrator saw (what a resume would replay)."""

    def __init__(self) -> None:
        self.seen: list[VectorStoreChange] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        if isinstance(msg, EventMessage) and isinstance(msg.event, VectorStoreChange):
            with self._lock:
                self.seen.append(msg.event)


@pytest.fixture
def team() -> Iterator[ToolTeam]:
    made = ToolTeam()
    yield made
    made.shutdown()


def bind(team: ToolTeam, name: str, *cards: Any) -> dict[str, Any]:
    ToolFactory(list(cards), observer=team.observer(name))
    return {tool.__name__: tool for card in cards for tool in card.get_tools()}


def names(team: ToolTeam) -> list[str]:
    return [member.name for member in team.proxy.get_team()]


def rows_by_scope(meta: Path) -> dict[str, int]:
    with sqlite3.connect(meta / "index" / "workspace_chunks" / "rows.sqlite3") as conn:
        found = conn.execute("SELECT scope, count(*) FROM rows GROUP BY scope").fetchall()
    return {str(scope): int(n) for scope, n in found}


def test_two_trees_of_one_team_share_one_store_and_each_sees_its_own(
    team: ToolTeam, workspaces_root: Path
) -> None:
    changes = Changes()
    team.proxy.subscribe(changes)
    base = workspaces_root / "anonymous" / "_id"
    for leaf in ("p1", "p2"):
        (base / leaf).mkdir(parents=True)
        (base / leaf / "a.md").write_text("# A\n\nidentical okapi field notes\n")
    (base / "p2" / "b.md").write_text("# B\n\nthe okapi appears only in the second tree\n")
    card1 = WorkspaceTool(workspace_id="p1", **rag_fields())
    card2 = WorkspaceTool(workspace_id="p2", **rag_fields())
    tools1 = bind(team, "@One", card1)
    tools2 = bind(team, "@Two", card2)
    assert names(team).count(STORE_ACTOR_NAME) == 1
    assert tools1["workspace_rag_index"]().startswith("1 file(s) queued")
    assert tools2["workspace_rag_index"]().startswith("2 file(s) queued")
    done1 = drained(SimpleNamespace(card=card1))
    done2 = drained(SimpleNamespace(card=card2))
    assert {r["status"] for r in [*done1.values(), *done2.values()]} == {"embedded"}

    first = tools1["workspace_rag_search"]("okapi field notes")
    second = tools2["workspace_rag_search"]("okapi field notes")
    assert [h.path for h in first.hits] == ["a.md"]
    assert sorted(h.path for h in second.hits) == ["a.md", "b.md"]
    # The vector leg answered for both trees, not only the last one the store routed to.
    assert {h.match for h in first.hits} == {"hybrid"}
    assert {h.path: h.match for h in second.hits} == {"a.md": "hybrid", "b.md": "semantic"}

    scope1 = card1._rag.ctx.scope
    scope2 = card2._rag.ctx.scope
    assert scope1 != scope2
    assert rows_by_scope(base / "p1.index") == {scope1: 1}
    assert rows_by_scope(base / "p2.index") == {scope2: 2}
    # The rows are durable beside each tree: the store's log does not carry them too.
    assert [c.op for c in changes.seen if c.op != "create"] == []


def test_beside_a_planning_tool_the_workspace_is_local_and_the_store_is_one(
    team: ToolTeam, workspaces_root: Path
) -> None:
    planning_tool: Any = pytest.importorskip("akgentic_planning").PlanningTool
    tree = workspaces_root / "anonymous" / "_id" / "p"
    tree.mkdir(parents=True)
    (tree / "a.md").write_text("# Plan notes\n\nthe capybara milestone\n")
    planning = planning_tool(vector_store=HASHING)
    card = WorkspaceTool(workspace_id="p", **rag_fields())
    tools = bind(team, "@A", planning, card)
    assert names(team).count(STORE_ACTOR_NAME) == 1
    policy = json.loads((tree.with_name("p.index") / "rag" / "policy.json").read_text())
    assert policy["backend"] == "local"
    tools["workspace_rag_index"]()
    drained(SimpleNamespace(card=card))
    hit = tools["workspace_rag_search"]("capybara milestone").hits[0]
    assert hit.path == "a.md" and hit.match == "hybrid"
    assert (tree.with_name("p.index") / "index" / "workspace_chunks" / "rows.sqlite3").is_file()


def test_a_declared_inmemory_backend_fails_the_bind_in_a_team(
    team: ToolTeam, workspaces_root: Path
) -> None:
    declared = VectorStoreParam(
        backend="inmemory", embedding_provider="hashing", embedding_model="hashing", dimension=256
    )
    card = WorkspaceTool(workspace_id="p", **rag_fields(vector_store=declared))
    with pytest.raises(ValueError, match="not a workspace backend"):
        bind(team, "@A", card)
    assert STORE_ACTOR_NAME not in names(team)


def test_index_and_embed_jobs_run_in_child_actors_of_the_workspace_actor(
    team: ToolTeam, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import akgentic_workspace.rag.pipeline as pipeline
    import pykka
    from akgentic_workspace.rag.workers import RagWorker

    from akgentic.testing import wait_until

    tree = workspaces_root / "anonymous" / "_id" / "p"
    tree.mkdir(parents=True)
    (tree / "a.md").write_text("# A\n\nthe tapir crossing\n")
    held, release = threading.Event(), threading.Event()
    real = pipeline.read_source
    seen: list[str] = []

    def holding(tree: str, key: str, limit: int = pipeline.MAX_SOURCE_BYTES) -> bytes:
        if threading.current_thread() is threading.main_thread():
            return real(tree, key, limit)  # the index call's own digest
        seen.append(threading.current_thread().name)
        held.set()
        release.wait(30)
        return real(tree, key, limit)

    monkeypatch.setattr(pipeline, "read_source", holding)
    card = WorkspaceTool(workspace_id="p", **rag_fields())
    tools = bind(team, "@A", card)
    tools["workspace_rag_index"]()
    wait_until(held.is_set, timeout=30)
    # Asked nothing while it works (a busy actor answers only after its job).
    assert len(pykka.ActorRegistry.get_by_class(RagWorker)) == 1
    assert seen[0].startswith("RagWorker")  # the job runs on the worker actor's thread
    release.set()
    assert drained(SimpleNamespace(card=card))["a.md"]["status"] == "embedded"
    wait_until(lambda: not pykka.ActorRegistry.get_by_class(RagWorker), timeout=30)
    assert not any(n.startswith(("#index-", "#embed-")) for n in names(team))  # never in the log
