"""Helpers for tests of the retrieval capabilities: card fields, record reads, drain waits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from akgentic.plugin_api import VectorStoreParam
from akgentic.testing import wait_until

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)
FINAL = {"embedded", "keyword", "failed", "stale"}


def rag_fields(**extra: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "workspace_rag_index": True,
        "workspace_rag_list": True,
        "workspace_rag_search": True,
        "vector_store": HASHING,
    }
    fields.update(extra)
    return fields


def records(meta: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in (meta / "rag" / "records").glob("*.json"):
        record = json.loads(path.read_text())
        out[record["path"]] = record
    return out


def drained(agent: Any, timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    meta = Path(agent.card._rag.ctx.settings.meta)

    def done() -> bool:
        if agent.card._rag.busy():
            return False
        return all(r["status"] in FINAL for r in records(meta).values())

    wait_until(done, timeout=timeout)
    return records(meta)
