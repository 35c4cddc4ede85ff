"""A process SIGKILLed in the middle of indexing: the next one requeues and finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from akgentic_workspace.rag.testing import drained, rag_fields, records

from akgentic.testing import wait_until

CHILD = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from akgentic_embed_local.hashing import HashingEmbedder
    from akgentic_workspace import WorkspaceTool
    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.testing import RecordingObserver
    from akgentic.vector.param import VectorStoreParam

    real = HashingEmbedder.embed
    calls = []
    def slow(self, texts):
        calls.append(1)
        if len(calls) > 2:
            Path(sys.argv[1]).write_text("mid")
            threading.Event().wait()  # hold every later batch until the kill
        return real(self, texts)
    HashingEmbedder.embed = slow
    card = WorkspaceTool(
        workspace_id="p", workspace_rag_index=True, workspace_rag_search=True,
        vector_store=VectorStoreParam(embedding_provider="hashing", embedding_model="hashing",
                                      dimension=256),
    )
    observer = RecordingObserver(name="@K", user_id="alice")  # the card holds it weakly
    ToolFactory([card], observer=observer)
    print(card.get_tools()[[t.__name__ for t in card.get_tools()].index("workspace_rag_index")](),
          flush=True)
    threading.Event().wait()
    """
)


def test_sigkill_mid_index_then_resume(
    make_agent: Callable[..., Any], workspaces_root: Path, tmp_path: Path
) -> None:
    tree = workspaces_root / "alice" / "_id" / "p"
    tree.mkdir(parents=True)
    for i in range(300):
        (tree / f"doc{i:03}.md").write_text(f"# Doc {i}\n\nbody of document number {i}\n")
    marker = tmp_path / "marker"
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker)],
        env={**os.environ, "AKGENTIC_WORKSPACES_ROOT": str(workspaces_root)},
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            wait_until(lambda: marker.exists() or child.poll() is not None, timeout=60)
            assert marker.exists(), "the child ended before it was killed"
            os.kill(child.pid, signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
    meta = tree.with_name("p.index")
    before = records(meta)
    assert len(before) == 300
    assert any(r["status"] != "embedded" for r in before.values())
    agent = make_agent(**rag_fields())
    done = drained(agent, timeout=180)
    assert len(done) == 300
    assert {r["status"] for r in done.values()} == {"embedded"}
    live_ids = [c["id"] for r in done.values() for c in r["live"]["chunks"]]
    assert len(live_ids) == len(set(live_ids))
    store = agent.card._rag.ctx.store
    assert store.count("workspace_chunks") == len(live_ids)
    hits = agent.tools["workspace_rag_search"]("document number 7", top_k=50).hits
    keys = [(h.path, h.ordinal) for h in hits]
    assert len(keys) == len(set(keys))
