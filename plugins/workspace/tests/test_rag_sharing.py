"""Retrieval shared by cards, teams and processes over one tree; writes during a run.

To write while a run is in flight, one test wraps ``pipeline.read_source`` so the real
read waits on an event the test sets; the timing of a natural race is not reproduced.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace.rag.testing import drained, rag_fields, records

from akgentic.testing import wait_until

MakeAgent = Callable[..., Any]


def test_a_write_during_a_run_never_ends_embedded_at_the_old_bytes(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import akgentic_workspace.rag.pipeline as pipeline

    a = make_agent(**rag_fields())
    b = make_agent("@B", **rag_fields())
    b.tools["workspace_write"]("a.md", "# A\n\nthe old gazelle text\n")
    held = threading.Event()
    release = threading.Event()
    real = pipeline.read_source

    def holding(tree: str, key: str, limit: int = pipeline.MAX_SOURCE_BYTES) -> bytes:
        held.set()
        release.wait(30)
        return real(tree, key, limit)

    monkeypatch.setattr(pipeline, "read_source", holding)
    a.tools["workspace_rag_index"]()
    wait_until(held.is_set, timeout=30)
    b.read("a.md")
    b.tools["workspace_write"]("a.md", "# A\n\nthe new antelope text\n")
    release.set()
    monkeypatch.setattr(pipeline, "read_source", real)
    done = drained(a)
    new_sha = hashlib.sha256(b"# A\n\nthe new antelope text\n").hexdigest()
    record = done["a.md"]
    assert not (record["status"] == "embedded" and record["live"]["sha"] != new_sha)
    a.tools["workspace_rag_index"]()
    record = drained(a)["a.md"]
    assert record["status"] == "embedded" and record["live"]["sha"] == new_sha
    assert not any("gazelle" in h.text for h in a.tools["workspace_rag_search"]("gazelle").hits)
    hit = a.tools["workspace_rag_search"]("antelope").hits[0]
    assert "antelope" in hit.text and not hit.stale


def test_reindex_on_write_passes_once_after_the_quiet_period(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    from akgentic_workspace import WorkspaceRagIndex

    agent = make_agent(**rag_fields(workspace_rag_index=WorkspaceRagIndex(reindex_on_write=True)))
    agent.tools["workspace_write"]("a.md", "first\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    meta = workspaces_root / "alice" / "_id" / "p.index"
    for i in range(3):
        agent.read("a.md")
        agent.tools["workspace_write"]("a.md", f"version {i} of the koala notes\n")
    assert records(meta)["a.md"]["status"] == "stale"
    wait_until(lambda: records(meta)["a.md"]["status"] == "embedded", timeout=30)
    live = records(meta)["a.md"]["live"]
    assert live["sha"] == hashlib.sha256(b"version 2 of the koala notes\n").hexdigest()


def test_two_teams_share_the_index_and_a_forced_reindex_keeps_it(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    t1 = make_agent("@T1", **rag_fields())
    t2 = make_agent("@T2", **rag_fields())
    tree = workspaces_root / "alice" / "_id" / "p"
    (tree / "a.md").write_text("# Shared\n\nnarwhal migration routes\n")
    t1.tools["workspace_rag_index"]()
    drained(t1)
    assert t2.tools["workspace_rag_search"]("narwhal").hits[0].path == "a.md"
    count = t1.card._rag.ctx.store.count("workspace_chunks")
    assert t2.tools["workspace_rag_index"](force=True).startswith("1 file(s) queued")
    drained(t2)
    assert t1.tools["workspace_rag_search"]("narwhal").hits[0].path == "a.md"
    assert t1.card._rag.ctx.store.count("workspace_chunks") == count


CHILD = textwrap.dedent(
    """
    import sys
    from akgentic_workspace import WorkspaceTool
    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.testing import RecordingObserver
    from akgentic.vector.param import VectorStoreParam

    card = WorkspaceTool(
        workspace_id="p", workspace_rag_index=True,
        vector_store=VectorStoreParam(embedding_provider="hashing", embedding_model="hashing",
                                      dimension=256),
    )
    observer = RecordingObserver(name=sys.argv[1], user_id="alice")
    ToolFactory([card], observer=observer)
    print(card.get_tools()[[t.__name__ for t in card.get_tools()].index("workspace_rag_index")](),
          flush=True)
    """
)


def test_two_processes_queue_each_file_once(make_agent: MakeAgent, workspaces_root: Path) -> None:
    tree = workspaces_root / "alice" / "_id" / "p"
    tree.mkdir(parents=True)
    for i in range(200):
        (tree / f"n{i:03}.md").write_text(f"note {i} about walruses\n")
    env = {**os.environ, "AKGENTIC_WORKSPACES_ROOT": str(workspaces_root)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, name], env=env, stdout=subprocess.PIPE, text=True
        )
        for name in ("@P1", "@P2")
    ]
    outputs = [child.communicate(timeout=120)[0] for child in children]
    queued = [int(out.strip().split(" ", 1)[0]) for out in outputs]
    assert sum(queued) == 200, outputs
    agent = make_agent(**rag_fields())
    done = drained(agent, timeout=120)
    assert len(done) == 200 and {r["status"] for r in done.values()} == {"embedded"}
    ids = [c["id"] for r in done.values() for c in r["live"]["chunks"]]
    assert agent.card._rag.ctx.store.count("workspace_chunks") == len(set(ids)) == len(ids)
