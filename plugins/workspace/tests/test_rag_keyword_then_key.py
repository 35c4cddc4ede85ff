"""Keyword-only without an embedder key, then the same rows embedded once a key is set.

The ``openai`` embedder talks to a small OpenAI-compatible HTTP server started here
(the SDK's real client over a real socket); it answers ``/embeddings`` with
deterministic unit vectors and counts the requests.

One test wraps ``pipeline.read_source`` in a counter that calls the real reader, to show
the second pass embeds without reading the file again; it verifies the count, not the
reader (which the other retrieval tests exercise unwrapped).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace.rag.testing import drained

from akgentic.vector.param import DEFAULT_DIMENSION

MakeAgent = Callable[..., Any]
CAPABILITIES = {
    "workspace_rag_index": True,
    "workspace_rag_list": True,
    "workspace_rag_search": True,
}


def _vector(text: str) -> list[float]:
    out = [0.0] * DEFAULT_DIMENSION
    for word in text.lower().split():
        slot = int(hashlib.sha256(word.encode()).hexdigest(), 16) % DEFAULT_DIMENSION
        out[slot] += 1.0
    norm = math.sqrt(sum(v * v for v in out)) or 1.0
    return [v / norm for v in out]


class _Embeddings(BaseHTTPRequestHandler):
    requests: list[int] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.requests.append(len(inputs))
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(str(text))}
            for i, text in enumerate(inputs)
        ]
        payload = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        del format, args


@pytest.fixture
def embeddings_server() -> Iterator[tuple[str, list[int]]]:
    _Embeddings.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", _Embeddings.requests
    server.shutdown()
    server.server_close()


def test_without_a_key_rows_are_keyword_and_a_key_later_only_embeds(
    make_agent: MakeAgent,
    workspaces_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    embeddings_server: tuple[str, list[int]],
) -> None:
    import akgentic_workspace.rag.pipeline as pipeline

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    tree = workspaces_root / "alice" / "_id" / "p"
    tree.mkdir(parents=True)
    (tree / "ferns.md").write_text("# Ferns\n\nthe quillwort grows beside the pond\n")
    with caplog.at_level(logging.WARNING):
        first = make_agent(**CAPABILITIES)
    warned = [r for r in caplog.records if "OPENAI_API_KEY" in r.getMessage()]
    assert len(warned) == 1 and warned[0].levelno == logging.WARNING
    answer = first.tools["workspace_rag_index"]()
    assert answer.startswith("1 file(s) queued") and "keyword only:" in answer
    assert drained(first)["ferns.md"]["status"] == "keyword"
    result = first.tools["workspace_rag_search"]("quillwort pond")
    assert [(h.path, h.match, h.score) for h in result.hits] == [("ferns.md", "keyword", None)]
    assert result.note is not None and "keyword matches only" in result.note

    url, requests = embeddings_server
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    reads: list[str] = []
    real = pipeline.read_source

    def counting(tree: str, key: str, limit: int = pipeline.MAX_SOURCE_BYTES) -> bytes:
        reads.append(key)
        return real(tree, key, limit)

    monkeypatch.setattr(pipeline, "read_source", counting)
    second = make_agent("@B", **CAPABILITIES)
    assert second.tools["workspace_rag_index"]().startswith("1 file(s) queued")
    record = drained(second)["ferns.md"]
    assert record["status"] == "embedded" and record["live"]["embedded"]
    assert reads == []  # the keyword set gained vectors without the file being read again
    assert requests == [1]
    hit = second.tools["workspace_rag_search"]("quillwort pond").hits[0]
    assert hit.path == "ferns.md" and hit.match == "hybrid" and hit.score is not None
    assert second.tools["workspace_rag_index"]().startswith("0 file(s) queued, 1 already current")


def test_a_walk_out_of_time_answers_partially_and_reconciles_nothing(
    make_agent: MakeAgent, workspaces_root: Path
) -> None:
    from akgentic_workspace.rag.testing import rag_fields, records

    agent = make_agent(**rag_fields())
    tree = workspaces_root / "alice" / "_id" / "p"
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / "gone.md").write_text("# Gone\n\nsoon deleted\n")
    agent.tools["workspace_rag_index"]()
    drained(agent)
    (tree / "docs" / "gone.md").unlink()
    (tree / "docs" / "new.md").write_text("# New\n\nfresh text\n")
    ctx = agent.card._rag.ctx
    ctx.walk_budget_s = 0.0  # the budget is spent before the first directory is listed
    answer = agent.tools["workspace_rag_index"]()
    assert answer.endswith("; walk stopped after 10 s — call again")
    assert answer.startswith("0 file(s) queued") and "0 removed" in answer
    assert "docs/gone.md" in records(tree.with_name("p.index"))  # no reconcile on a partial walk
    ctx.walk_budget_s = 10.0
    answer = agent.tools["workspace_rag_index"]()
    assert answer.startswith("1 file(s) queued") and answer.endswith("1 removed")
    assert "walk stopped" not in answer
