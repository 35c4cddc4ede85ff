"""Code versions in a tree's retrieval policy: newer code republishes, older is refused.

The older release (splitter ``rag-split-1``, extractor ``markitdown-1``) is not
installable here, so the tree it left is built by this code's own pipeline run with
that release's two differences: the fingerprint over its versions, and its document
extraction, which handed a PDF the PDF converter rejects to MarkItDown's plain-text
fallback (the raw bytes became the indexed text). Everything else - records, indexed
text, ``local`` rows, the policy file - is written by the real pipeline and store.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace import WorkspaceRagIndex, WorkspaceRagList, WorkspaceRagSearch
from akgentic_workspace.documents import EXTRACTOR_VERSION
from akgentic_workspace.rag.context import RagContext, RagSettings, chunking_of
from akgentic_workspace.rag.indexing import index_tree
from akgentic_workspace.rag.pipeline import RagPipeline
from akgentic_workspace.rag.policy import (
    CODE_VERSIONS,
    compare_versions,
    fingerprint,
    publish_policy,
    row_id,
)
from akgentic_workspace.rag.service import resolve_param
from akgentic_workspace.rag.testing import FINAL, HASHING, drained, rag_fields, records

from akgentic.testing import wait_until
from akgentic.tool.errors import RetriableError

MakeAgent = Callable[..., Any]
OLD = {"splitter": "rag-split-1", "extractor": "markitdown-1"}
#: Starts like a PDF, so it is routed to the PDF reader, which cannot parse the rest.
CORRUPT_PDF = b"%PDF-1.4\nplatypus ledger 4711 was never a real document\n" * 8


def tree_of(root: Path) -> Path:
    tree = root / "alice" / "_id" / "p"
    tree.mkdir(parents=True, exist_ok=True)
    return tree


def policy(tree: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (tree.with_name("p.index") / "rag" / "policy.json").read_text()
    )
    return data


class _OldRelease(RagContext):
    """This pipeline's context as the markitdown-1 release ran it (see module docstring)."""

    def __init__(self, settings: RagSettings) -> None:
        super().__init__(settings)
        self.fingerprint = fingerprint(chunking_of(settings.index), OLD)

    def extract(self, key: str, ext: str, data: bytes) -> str:
        return data.decode("utf-8", "replace")


def index_as_old_release(tree: Path, files: int) -> str:
    """Index ``tree`` the way the markitdown-1 release did; returns the scope it used."""
    meta = tree.with_name("p.index")
    (meta / "locks").mkdir(parents=True, exist_ok=True)
    param, reason = resolve_param(HASHING, meta)
    assert reason is None and param is not None
    index = WorkspaceRagIndex()
    tree_id = publish_policy(
        meta,
        {
            "chunking": chunking_of(index),
            "versions": dict(OLD),
            "embedder": {"provider": "hashing", "model": "hashing", "dimension": 256},
            "backend": param.backend,
            "tenant": param.tenant,
        },
    )
    settings = RagSettings(
        tree=str(tree),
        meta=str(meta),
        scope=f"alice/_id/p@{tree_id}",
        index=index,
        search=WorkspaceRagSearch(),
        listing=WorkspaceRagList(),
        store_param=param,
        keyword_reason=None,
        docs_enabled=True,
        team_id=None,
    )
    ctx = _OldRelease(settings)
    lock = threading.RLock()

    def post(work: Callable[[], None]) -> None:
        with lock:
            work()

    pipeline = RagPipeline(ctx, post)
    try:
        assert index_tree(ctx, "", False).startswith(f"{files} file(s) queued")
        post(pipeline.drain)

        def done() -> bool:
            with lock:
                if pipeline.busy():
                    return False
            return all(r["status"] in FINAL for r in records(meta).values())

        wait_until(done, timeout=60)
    finally:
        pipeline.close()
    return settings.scope


def test_versions_are_ordered_per_component_by_their_trailing_number() -> None:
    ours = {"splitter": "rag-split-1", "extractor": "markitdown-2"}
    assert compare_versions(dict(ours), ours) == ("equal", "")
    assert compare_versions(OLD, ours)[0] == "newer"
    assert compare_versions({"splitter": "rag-split-1"}, ours)[0] == "newer"
    # Numbers, not strings: 10 is after 9.
    assert compare_versions({"extractor": "markitdown-9"}, {"extractor": "markitdown-10"}) == (
        "newer",
        "extractor 'markitdown-9' -> 'markitdown-10'",
    )
    verdict, detail = compare_versions({**ours, "extractor": "markitdown-3"}, ours)
    assert verdict == "older" and "'markitdown-3' is newer than 'markitdown-2'" in detail
    # One component newer does not excuse another that is older.
    assert compare_versions({"splitter": "rag-split-2", "extractor": "markitdown-1"}, ours)[0] == (
        "older"
    )
    assert compare_versions({**ours, "extractor": "pdfminer-7"}, ours)[0] == "unordered"
    assert compare_versions({**ours, "extractor": "markitdown-02"}, ours)[0] == "unordered"
    assert compare_versions({**ours, "extractor": "markitdown"}, ours)[0] == "unordered"
    assert compare_versions({**ours, "ocr": "tesseract-1"}, ours)[0] == "older"
    assert compare_versions(["markitdown-1"], ours)[0] == "unordered"


def test_the_extractor_version_is_the_document_readers() -> None:
    assert CODE_VERSIONS["extractor"] == EXTRACTOR_VERSION == "markitdown-2"


def test_equal_code_passes_and_changes_nothing(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    first = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# A\n\nalpha text about apples\n")
    first.tools["workspace_rag_index"]()
    drained(first)
    published = (tree.with_name("p.index") / "rag" / "policy.json").read_bytes()
    second = make_agent("@B", **rag_fields())
    assert (tree.with_name("p.index") / "rag" / "policy.json").read_bytes() == published
    assert policy(tree)["versions"] == CODE_VERSIONS
    assert second.tools["workspace_rag_index"]().startswith("0 file(s) queued, 1 already current")


def test_older_code_is_refused_naming_both_versions_and_the_file(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    tree = tree_of(workspaces_root)
    meta = tree.with_name("p.index")
    (meta / "locks").mkdir(parents=True)
    newer = {**CODE_VERSIONS, "extractor": "markitdown-3"}
    publish_policy(meta, {"versions": newer})
    before = (meta / "rag" / "policy.json").read_bytes()
    with pytest.raises(ValueError, match="published retrieval policy holds") as caught:
        make_agent(**rag_fields())
    message = str(caught.value)
    assert "markitdown-3" in message and EXTRACTOR_VERSION in message
    assert str(meta / "rag" / "policy.json") in message
    assert (meta / "rag" / "policy.json").read_bytes() == before


def test_newer_code_republishes_and_the_next_pass_reindexes(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# Notes\n\nthe wombat burrow is three metres deep\n")
    (tree / "b.py").write_text("# a comment\nprint('numbat')\n")
    scope = index_as_old_release(tree, 2)
    old = records(tree.with_name("p.index"))
    assert {p: r["status"] for p, r in old.items()} == {"a.md": "embedded", "b.py": "embedded"}
    tree_id = policy(tree)["tree_id"]

    agent = make_agent(**rag_fields())
    ctx = agent.card._rag.ctx
    assert ctx.scope == scope  # same tree id: the old rows stay addressable
    assert policy(tree)["versions"] == CODE_VERSIONS and policy(tree)["tree_id"] == tree_id
    assert ctx.fingerprint != old["a.md"]["live"]["fingerprint"]
    search = agent.tools["workspace_rag_search"]
    # Until the next pass the old live chunks keep being served.
    assert search("wombat burrow").hits[0].path == "a.md"
    old_rows = {c["id"] for r in old.values() for c in r["live"]["chunks"]}
    assert set(ctx.store.stored_ids("workspace_chunks")) == {
        row_id(ctx.tenant, i) for i in old_rows
    }

    answer = agent.tools["workspace_rag_index"]()
    assert answer.startswith("2 file(s) queued, 0 already current"), answer
    done = drained(agent)
    live_rows = set()
    for path in ("a.md", "b.py"):
        assert done[path]["status"] == "embedded" and done[path]["owed"] == []
        assert done[path]["live"]["fingerprint"] == ctx.fingerprint
        live_rows |= {c["id"] for c in done[path]["live"]["chunks"]}
    assert not old_rows & live_rows  # new fingerprint, new ids; the old rows are removed
    assert set(ctx.store.stored_ids("workspace_chunks")) == {
        row_id(ctx.tenant, i) for i in live_rows
    }
    assert search("wombat burrow").hits[0].path == "a.md"
    assert agent.tools["workspace_rag_index"]().startswith("0 file(s) queued, 2 already current")


@pytest.mark.skipif(
    importlib.util.find_spec("markitdown") is None,
    reason='the docs extra is not installed: pip install "akgentic-workspace[docs]"',
)
def test_a_corrupt_pdf_indexed_as_raw_text_drops_its_chunks_after_the_upgrade(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    tree = tree_of(workspaces_root)
    (tree / "a.md").write_text("# Notes\n\nthe wombat burrow is three metres deep\n")
    (tree / "r.pdf").write_bytes(CORRUPT_PDF)
    index_as_old_release(tree, 2)
    old = records(tree.with_name("p.index"))
    assert old["r.pdf"]["status"] == "embedded"
    agent = make_agent(**rag_fields())
    ctx = agent.card._rag.ctx
    search = agent.tools["workspace_rag_search"]
    assert "r.pdf" in {hit.path for hit in search("platypus ledger 4711").hits}

    agent.tools["workspace_rag_index"]()
    done = drained(agent)
    assert done["r.pdf"]["status"] == "failed" and done["r.pdf"]["permanent"]
    assert "not a readable .pdf document" in done["r.pdf"]["reason"]
    assert done["r.pdf"]["live"] is None and done["r.pdf"]["owed"] == []
    assert "r.pdf" not in {hit.path for hit in search("platypus ledger 4711").hits}
    assert ctx.store.count("workspace_chunks") == len(done["a.md"]["live"]["chunks"])
    assert not (tree.with_name("p.index") / "rag" / "text" / old["r.pdf"]["live"]["text"]).exists()
    assert agent.tools["workspace_rag_index"]().startswith("0 file(s) queued, 2 already current")


def test_a_permanent_failure_under_older_code_is_tried_again(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    tree = tree_of(workspaces_root)
    (tree / "junk.txt").write_bytes(b"\x00\x01\x02 not text")
    index_as_old_release(tree, 1)
    old = records(tree.with_name("p.index"))["junk.txt"]
    assert old["status"] == "failed" and old["permanent"]
    agent = make_agent(**rag_fields())
    assert agent.tools["workspace_rag_index"]().startswith("1 file(s) queued, 0 already current")
    done = drained(agent)["junk.txt"]
    assert (
        done["status"] == "failed" and done["failed_fingerprint"] == agent.card._rag.ctx.fingerprint
    )
    assert agent.tools["workspace_rag_index"]().startswith("0 file(s) queued, 1 already current")


def test_a_card_bound_before_newer_code_republished_stops_indexing(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    agent = make_agent(**rag_fields())
    tree = tree_of(workspaces_root)
    meta = tree.with_name("p.index")
    (tree / "a.md").write_text("# A\n\nalpha text about apples\n")
    (tree / "b.md").write_text("# B\n\nbeta text about bananas\n")
    ctx = agent.card._rag.ctx
    assert ctx.queue_paths(["a.md"], force=False) == 1  # queued, not drained yet
    newer = {**CODE_VERSIONS, "extractor": "markitdown-3"}
    publish_policy(meta, {"versions": newer})  # what a newer release's bind does
    assert policy(tree)["versions"] == newer
    with pytest.raises(RetriableError, match="published retrieval policy holds") as caught:
        agent.tools["workspace_rag_index"]()
    assert "markitdown-3" in str(caught.value) and str(meta / "rag" / "policy.json") in str(
        caught.value
    )
    assert ctx.queue_paths(["b.md"], force=False) == 0
    agent.card._rag.drain()  # runs on this thread: a claim would show at once
    assert records(meta)["a.md"]["status"] == "pending"
    assert "b.md" not in records(meta)
