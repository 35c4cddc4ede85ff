"""The retrieval capabilities on a bound card: index, list, search, stale marking, limits.

Stand-ins, and what they leave unverified: a few tests wrap the embedder's ``embed`` in
a counting or failing shim that calls the real one, to see how often it runs or to make
one batch fail; the embedder's own behaviour is covered by its contract kit, not here.
One test replaces the record digest with a recorder, only to prove that an unchanged
tree is never hashed again (the digest itself is not exercised by that assertion).
The no-MarkItDown case hides the installed package through ``sys.modules``, so it
checks the hint and the text path, not a real machine without the extra.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace import WorkspaceRagIndex, WorkspaceRagSearch
from akgentic_workspace.rag.testing import HASHING, drained, rag_fields, records
from pydantic import ValidationError

from akgentic.testing import wait_until
from akgentic.tool.errors import RetriableError
from akgentic.vector.param import VectorStoreParam

MakeAgent = Callable[..., Any]


def tree_of(root: Path) -> Path:
    tree = root / "alice" / "_id" / "p"
    tree.mkdir(parents=True, exist_ok=True)
    return tree


def test_a_default_card_has_no_retrieval_and_writes_nothing(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent()
    assert not any(name.startswith("workspace_rag") for name in agent.tools)
    assert not any(name.startswith("workspace_rag") for name in agent.commands)
    tree = tree_of(workspaces_root)
    assert not (tree.with_name("p.index") / "rag").exists()
    assert not (tree / ".ragignore").exists()


def test_first_bind_seeds_ragignore_and_tools_follow_view(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    seeded = (tree_of(workspaces_root) / ".ragignore").read_text().splitlines()
    assert len([line for line in seeded if line and not line.startswith("#")]) == 13
    names = list(agent.tools)
    at = names.index("workspace_view")
    assert names[at + 1 : at + 3] == ["workspace_rag_index", "workspace_rag_search"]
    assert "workspace_rag_list" not in agent.tools and "workspace_rag_list" in agent.commands


def test_a_read_only_card_seeds_nothing_but_indexes(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(read_only=True, **rag_fields())
    assert not (tree_of(workspaces_root) / ".ragignore").exists()
    assert "workspace_rag_index" in agent.tools


def test_index_counts_drains_and_is_current_the_second_time(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# A\n\nalpha text about apples\n")
    (tree / "b.py").write_text("# comment\nprint('beta')\n")
    (tree / "logo.png").write_bytes(b"\x89PNG....")
    (tree / "x.bin").write_bytes(b"\x00\x01")
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "m.js").write_text("var m = 1;\n")
    index = agent.tools["workspace_rag_index"]
    assert index() == "2 file(s) queued, 0 already current, 2 unsupported, 0 ignored, 0 removed"
    done = drained(agent)
    assert {p: r["status"] for p, r in done.items()} == {"a.md": "embedded", "b.py": "embedded"}
    assert done["b.py"]["live"]["chunks"][0]["heading_path"] == []
    import akgentic_workspace.rag.indexing as indexing

    reads: list[str] = []
    monkeypatch.setattr(indexing, "_digest", lambda ctx, key: reads.append(key))
    assert index().startswith("0 file(s) queued, 2 already current, 2 unsupported")
    assert reads == []
    assert index("node_modules").startswith("1 file(s) queued")
    drained(agent)
    assert index("").endswith("1 removed")
    assert "node_modules/m.js" not in records(tree.with_name("p.index"))


def test_search_finds_the_late_fee_under_its_headings_and_the_range_reads_it(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "invoice.md").write_text(
        "# Invoice\n\n## Payment terms\n\n### Late fees\n\nA 2 % penalty per month.\n"
    )
    (tree / "other.md").write_text("# Other\n\nNothing about money here at all.\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    result = agent.tools["workspace_rag_search"]("late fee penalty")
    top = result.hits[0]
    assert top.path == "invoice.md" and top.match == "hybrid" and top.score is not None
    assert top.heading_path == ["Invoice", "Payment terms", "Late fees"]
    assert top.text.startswith("Invoice > Payment terms > Late fees")
    assert top.start_line is not None and top.end_line is not None
    shown = agent.read("invoice.md", offset=top.start_line, limit=top.end_line - top.start_line + 1)
    assert "A 2 % penalty per month." in shown
    rendered = agent.commands["workspace_rag_search"]("top_k=1 late fee penalty")
    assert rendered.startswith("1. invoice.md:") and "(hybrid, score" in rendered


def test_a_forced_reindex_of_unchanged_bytes_keeps_its_vectors(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# A\n\nzebra crossing rules\n")
    agent.tools["workspace_rag_index"]()
    before = drained(agent)["a.md"]["live"]["chunks"]
    store = agent.card._rag.ctx.store
    count = store.count("workspace_chunks")
    assert agent.tools["workspace_rag_index"]("a.md", force=True).startswith("1 file(s) queued")
    after = drained(agent)["a.md"]
    assert [c["id"] for c in after["live"]["chunks"]] == [c["id"] for c in before]
    assert after["status"] == "embedded" and store.count("workspace_chunks") == count
    hits = agent.tools["workspace_rag_search"]("zebra crossing").hits
    assert hits and hits[0].score is not None


def test_binary_junk_fails_naming_the_offset_and_is_requeued_only_by_force(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    rng = random.Random(3)
    (tree / "junk.txt").write_bytes(b"ok" + b"\x00" + bytes(rng.randrange(256) for _ in range(500)))
    (tree / "junk.pdf").write_bytes(bytes(rng.randrange(256) for _ in range(2000)))
    index = agent.tools["workspace_rag_index"]
    index()
    done = drained(agent)
    assert done["junk.txt"]["status"] == "failed" and "offset 2" in done["junk.txt"]["reason"]
    assert index("junk.txt").startswith("0 file(s) queued, 1 already current")
    assert index("junk.txt", force=True).startswith("1 file(s) queued")
    pdf = done.get("junk.pdf")
    assert pdf is None or pdf["status"] == "failed"


def test_huge_fifo_and_loop_are_never_opened(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the regular file is read; ``read_source`` is wrapped (not mocked) to count reads."""
    import resource

    import akgentic_workspace.rag.pipeline as pipeline

    agent = make_agent(**rag_fields())
    read: list[str] = []
    real = pipeline.read_source

    def counting(tree: str, key: str, limit: int = pipeline.MAX_SOURCE_BYTES) -> bytes:
        read.append(key)
        return real(tree, key, limit)

    monkeypatch.setattr(pipeline, "read_source", counting)
    tree = tree_of(workspaces_root)
    with open(tree / "big.txt", "wb") as handle:
        handle.truncate(100 * 1024 * 1024)
    os.mkfifo(tree / "p.md")
    os.symlink(".", tree / "d")
    (tree / "ok.md").write_text("fine\n")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    text = agent.tools["workspace_rag_index"]()
    assert "1 too large (over 16 MiB)" in text and text.startswith("1 file(s) queued")
    done = drained(agent)
    assert done["big.txt"]["status"] == "failed" and done["ok.md"]["status"] == "embedded"
    assert "p.md" not in done and not any(p.startswith("d/") for p in done)
    assert set(read) == {"ok.md"}  # the big file, the FIFO and the loop: never read
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 50 * 1024


@pytest.mark.parametrize("prefix", ["../x", "/etc", "docs/../../x"])
def test_an_escaping_prefix_is_refused_without_a_store_call(
    make_agent: MakeAgent, workspaces_root: Path, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(**rag_fields())
    (tree_of(workspaces_root) / "a.md").write_text("apples\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    calls: list[str] = []
    ctx = agent.card._rag.ctx

    def spy(texts: list[str]) -> list[list[float]]:
        calls.append("embed")
        return []

    monkeypatch.setattr(ctx.embedder, "embed", spy)
    result = agent.tools["workspace_rag_search"]("apples", path_prefix=prefix)
    assert result.hits == [] and "escapes the workspace" in (result.note or "")
    assert calls == []


def test_prefix_normalisation_and_wildcards(make_agent: MakeAgent, workspaces_root: Path) -> None:
    agent = make_agent(**rag_fields())
    (tree_of(workspaces_root) / "a.md").write_text("apples\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    search = agent.tools["workspace_rag_search"]
    assert [h.path for h in search("apples", path_prefix="docs/../a").hits] == ["a.md"]
    assert "wildcards are not supported" in (search("apples", path_prefix="a*").note or "")
    assert search("   ").note == "give the search a query"


def test_a_50_kb_query_is_cut_and_embedded_once(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(**rag_fields())
    (tree_of(workspaces_root) / "a.md").write_text("apples\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    ctx = agent.card._rag.ctx
    real = ctx.embedder.embed
    seen: list[list[str]] = []

    def spy(texts: list[str]) -> list[list[float]]:
        seen.append(texts)
        result: list[list[float]] = real(texts)
        return result

    monkeypatch.setattr(ctx.embedder, "embed", spy)
    result = agent.tools["workspace_rag_search"]("apples " * 8000)
    assert len(seen) == 1 and len(seen[0][0]) <= 8000
    assert "cut to 8000" in (result.note or "")


def test_a_delete_hides_hits_at_once_and_the_next_pass_removes_rows(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("quokka facts\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    assert agent.tools["workspace_rag_search"]("quokka").hits
    agent.tools["workspace_delete"]("a.md")
    assert agent.tools["workspace_rag_search"]("quokka").hits == []
    assert records(tree.with_name("p.index"))["a.md"]["status"] == "stale"
    assert "[stale]" in agent.commands["workspace_rag_list"]()
    assert agent.tools["workspace_rag_index"]().endswith("1 removed")
    assert agent.card._rag.ctx.store.count("workspace_chunks") == 0


def test_a_write_marks_stale_and_search_flags_it(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    meta = Path(agent.card._rag.ctx.settings.meta)

    def embedded() -> bool:
        # "stale" is a final status too, so wait for this file's own run to end.
        status = records(meta).get("a.md", {}).get("status")
        return not agent.card._rag.busy() and status == "embedded"

    agent.tools["workspace_write"]("a.md", "# Notes\n\nwombat burrows\n")
    agent.tools["workspace_rag_index"]()
    wait_until(embedded, timeout=60)
    agent.read("a.md")
    agent.tools["workspace_write"]("a.md", "# Notes\n\nwombat burrows are deep indeed\n")
    assert records(meta)["a.md"]["status"] == "stale"
    hit = agent.tools["workspace_rag_search"]("wombat").hits[0]
    assert hit.stale
    agent.tools["workspace_rag_index"]()
    wait_until(embedded, timeout=60)
    assert not agent.tools["workspace_rag_search"]("wombat").hits[0].stale


def test_keyword_only_when_the_store_is_switched_off(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields(vector_store=False))
    (tree_of(workspaces_root) / "a.md").write_text("# K\n\nkiwi orchard\n")
    assert "keyword only" in agent.tools["workspace_rag_index"]()
    done = drained(agent)
    assert done["a.md"]["status"] == "keyword"
    assert agent.card._rag.ctx.store is None and agent.card._rag.ctx.embedder is None
    result = agent.tools["workspace_rag_search"]("kiwi")
    assert result.hits[0].match == "keyword" and result.hits[0].score is None
    assert "keyword matches only" in (result.note or "")
    assert "switched off" in (result.note or "")


def test_a_declared_inmemory_backend_is_refused(make_agent: MakeAgent) -> None:
    with pytest.raises(ValueError, match="not a workspace backend"):
        make_agent(
            **rag_fields(
                vector_store=VectorStoreParam(
                    backend="inmemory", embedding_provider="hashing", dimension=256
                )
            )
        )


def test_the_policy_refuses_another_chunking(make_agent: MakeAgent) -> None:
    make_agent(**rag_fields())
    with pytest.raises(ValueError, match="published retrieval policy holds"):
        make_agent(**rag_fields(workspace_rag_index=WorkspaceRagIndex(chunk_chars=800)))


def test_a_failing_embedder_keeps_serving_the_old_passage(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# A\n\nold platypus passage\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    ctx = agent.card._rag.ctx
    real = ctx.embedder.embed

    def broken(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("embedder down")

    monkeypatch.setattr(ctx.embedder, "embed", broken)
    (tree / "a.md").write_text("# A\n\nsome new text about echidnas\n\nmore lines\n")
    agent.tools["workspace_rag_index"]()
    done = drained(agent)
    assert done["a.md"]["status"] == "failed" and "embedder down" in done["a.md"]["reason"]
    monkeypatch.setattr(ctx.embedder, "embed", real)
    hit = agent.tools["workspace_rag_search"]("platypus").hits[0]
    assert hit.path == "a.md" and hit.end_line == 3 and "old platypus passage" in hit.text
    assert hit.stale  # the file changed since that passage was indexed
    agent.tools["workspace_rag_index"]()
    done = drained(agent)
    assert done["a.md"]["status"] == "embedded"
    assert ctx.store.count("workspace_chunks") == len(done["a.md"]["live"]["chunks"])
    assert agent.tools["workspace_rag_search"]("echidnas").hits


def test_param_validation() -> None:
    with pytest.raises(ValidationError):
        WorkspaceRagIndex(chunk_overlap_chars=1200)
    with pytest.raises(ValidationError):
        WorkspaceRagSearch(top_k=0)


def test_an_escaping_or_missing_index_path(make_agent: MakeAgent) -> None:
    agent = make_agent(**rag_fields())
    with pytest.raises(RetriableError):
        agent.tools["workspace_rag_index"]("../etc")
    with pytest.raises(RetriableError, match="Nothing to index at nope"):
        agent.tools["workspace_rag_index"]("nope")


def test_new_file_message_queues_only_good_paths(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    from akgentic_workspace import NewFileMessage
    from akgentic_workspace.rag.uploads import queue_upload

    agent = make_agent(**rag_fields())
    (tree_of(workspaces_root) / "r.md").write_text("upload\n")
    pipeline = agent.card._rag.pipeline
    message = NewFileMessage(paths=["../etc/passwd", "missing.pdf", "r.md"])
    assert queue_upload(pipeline, agent.card._rag.ctx.tree, message) == 1
    drained(agent)
    assert queue_upload(pipeline, agent.card._rag.ctx.tree, message) == 0


def test_list_renders_counts_and_rows(make_agent: MakeAgent, workspaces_root: Path) -> None:
    agent = make_agent(**rag_fields())
    assert agent.commands["workspace_rag_list"]() == "No workspace files are indexed for retrieval."
    tree = tree_of(workspaces_root)
    for i in range(60):
        (tree / f"f{i:02}.md").write_text(f"file {i}\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    text = agent.commands["workspace_rag_list"]().splitlines()
    assert text[0] == "**Workspace retrieval index:** 60 file(s) — 60 embedded"
    assert len(text) <= 52 and text[-1] == "…and 10 more embedded"
    (tree / "f07.md").write_text("file 7, edited after the first pass\n")
    assert agent.tools["workspace_rag_index"]().startswith("1 file(s) queued")
    drained(agent)
    text = agent.commands["workspace_rag_list"]().splitlines()
    assert text[1] == "- f07.md [embedded] 1 chunk(s)"  # done rows: the newest first


_ = HASHING


def test_without_the_docs_extra_documents_get_the_hint_and_text_is_indexed(
    make_agent: MakeAgent, workspaces_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "markitdown", None)  # the import fails as if absent
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "r.pdf").write_bytes(b"%PDF-1.4\n% not read without the extra\n")
    (tree / "a.md").write_text("# A\n\nthe pangolin survey\n")
    answer = agent.tools["workspace_rag_index"]()
    assert answer.startswith("1 file(s) queued, 0 already current, 1 unsupported")
    assert answer.endswith(
        '; 1 document(s) need the docs extra: pip install "akgentic-workspace[docs]"'
    )
    done = drained(agent)
    assert {p: r["status"] for p, r in done.items()} == {"a.md": "embedded"}


def test_purging_a_tree_removes_its_rows_from_the_local_store(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    import sqlite3

    from akgentic_workspace.rag.service import purge_workspace_index

    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# A\n\nthe axolotl tank\n")
    (tree / "b.md").write_text("# B\n\nthe gecko tank\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    rows = tree.with_name("p.index") / "index" / "workspace_chunks" / "rows.sqlite3"

    def stored() -> int:
        with sqlite3.connect(rows) as conn:
            return int(conn.execute("SELECT count(*) FROM rows").fetchone()[0])

    assert stored() == 2
    assert purge_workspace_index(tree) == 2
    assert stored() == 0


def test_the_source_reader_follows_no_link_at_any_depth(tmp_path: Path) -> None:
    """A directory swapped for a link after the walk saw it is refused, not read through."""
    from akgentic_workspace.rag.errors import SourceError
    from akgentic_workspace.rag.pipeline import read_source

    tree = tmp_path / "tree"
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "a.md").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_text("the secret outside the tree\n")
    assert read_source(str(tree), "docs/a.md") == b"inside\n"
    (tree / "docs" / "a.md").unlink()
    (tree / "docs").rmdir()
    (tree / "docs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SourceError) as refused:
        read_source(str(tree), "docs/a.md")
    assert refused.value.args and "secret" not in str(refused.value)
    fifo = tree / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(SourceError):
        read_source(str(tree), "pipe.md")


def test_a_search_view_belongs_to_its_own_record_store(tmp_path: Path) -> None:
    """A dropped store's view goes with it: a new store must never be served an old view.

    The cache was keyed by ``id(store)``; a new store at a dead one's address and
    generation got the old tree's chunks (seen as a search that found nothing).
    """
    import gc
    from types import SimpleNamespace

    from akgentic_workspace.rag import searching
    from akgentic_workspace.rag.records import RecordStore

    first = RecordStore(tmp_path / "one")
    searching._view(SimpleNamespace(records=first))  # type: ignore[arg-type]
    assert first in searching._views
    held = len(searching._views)
    del first
    gc.collect()
    assert len(searching._views) == held - 1
    second = RecordStore(tmp_path / "two")
    view = searching._view(SimpleNamespace(records=second))  # type: ignore[arg-type]
    assert view is searching._views[second] and view.paths == []
