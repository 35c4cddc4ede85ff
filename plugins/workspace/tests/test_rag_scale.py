"""Ten thousand small files: the index call, the list, the drain and the second pass.

The embedder is the hashing one (no model, no network), so what is measured is the
walk, the records, the splitting and the batching — the parts this package owns.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace.rag.testing import drained, rag_fields

MakeAgent = Callable[..., Any]
FILES = 10_000


def test_ten_thousand_small_files_index_list_drain_and_stay_current(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import akgentic_workspace.rag.indexing as indexing

    tree = workspaces_root / "alice" / "_id" / "p"
    line = "the {i} ledger entry lists a payment, its payer and the invoice it settles\n"
    for i in range(FILES):
        folder = tree / f"d{i // 100:03}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"n{i:05}.md").write_text(f"# Note {i}\n\n" + line.format(i=i) * 13)
    agent = make_agent(**rag_fields())
    started = time.monotonic()
    answer = agent.tools["workspace_rag_index"]()
    assert time.monotonic() - started <= 5.0
    assert answer.startswith(f"{FILES} file(s) queued, 0 already current")
    listing = agent.commands["workspace_rag_list"]()
    assert len(listing.splitlines()) <= 52 and f"{FILES} file(s)" in listing
    done = drained(agent, timeout=180.0)
    assert len(done) == FILES and {r["status"] for r in done.values()} == {"embedded"}
    assert agent.card._rag.pipeline.embed_requests <= 160

    reads: list[str] = []
    real = indexing._digest

    def counting(ctx: Any, key: str) -> Any:
        reads.append(key)
        return real(ctx, key)

    monkeypatch.setattr(indexing, "_digest", counting)
    started = time.monotonic()
    again = agent.tools["workspace_rag_index"]()
    assert time.monotonic() - started <= 3.0
    assert again.startswith(f"0 file(s) queued, {FILES} already current")
    assert reads == []
    hit = agent.tools["workspace_rag_search"]("ledger entry 4321 payment").hits[0]
    assert hit.path.endswith(".md") and hit.match in ("hybrid", "keyword")
