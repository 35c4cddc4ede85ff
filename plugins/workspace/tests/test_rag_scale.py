"""Ten thousand small files: the index call, the list, the drain and the second pass.

The embedder is the hashing one (no model, no network), so what is checked is the
work of the walk, the records, the splitting and the batching — the parts this package
owns — counted, not timed: the first call reads each file once, the second none, and
the drain sends a bounded number of embedding requests. The seconds the two calls take
(the spec's 5 s and 3 s of CPU) are measured by ``bench/tools_rag.py``
(``index_call_cpu_s_10000_first`` / ``_second``), never asserted here.

The record digest is wrapped in a counter that calls the real one; the counter
verifies how often it runs, nothing else.
"""

from __future__ import annotations

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
    # The walk's time budget has its own test; here every file must be seen, however
    # slow the machine is today.
    agent.card._rag.ctx.walk_budget_s = float("inf")
    reads: list[str] = []
    real = indexing._digest

    def counting(ctx: Any, key: str) -> Any:
        reads.append(key)
        return real(ctx, key)

    monkeypatch.setattr(indexing, "_digest", counting)
    answer = agent.tools["workspace_rag_index"]()
    assert len(reads) == len(set(reads)) == FILES  # each file read once
    assert answer.startswith(f"{FILES} file(s) queued, 0 already current")
    listing = agent.commands["workspace_rag_list"]()
    assert len(listing.splitlines()) <= 52 and f"{FILES} file(s)" in listing
    done = drained(agent, timeout=180.0)
    assert len(done) == FILES and {r["status"] for r in done.values()} == {"embedded"}
    assert agent.card._rag.pipeline.embed_requests <= 160

    reads.clear()
    again = agent.tools["workspace_rag_index"]()
    assert again.startswith(f"0 file(s) queued, {FILES} already current")
    assert reads == []
    result = agent.tools["workspace_rag_search"]("4321 ledger entry payment")
    assert result.hits[0].path == "d043/n04321.md", result
