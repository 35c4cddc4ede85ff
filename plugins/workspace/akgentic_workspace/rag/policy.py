"""The tree's published retrieval policy (``<meta>/rag/policy.json``) and chunk identity."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

from akgentic.vector.protocol import stable_object_id

__all__ = [
    "CHUNK_ID_NAMESPACE",
    "CODE_VERSIONS",
    "chunk_id",
    "fingerprint",
    "publish_policy",
    "row_id",
]

CHUNK_ID_NAMESPACE = uuid.UUID("2f5c1a90-7b64-5c3e-9f21-0d8a4c6b1e73")
CODE_VERSIONS = {"splitter": "rag-split-1", "extractor": "markitdown-1"}


def chunk_id(scope: str, path: str, source_sha: str, fp: str, ordinal: int) -> str:
    """Deterministic id of one chunk: equal inputs give equal ids in any process."""
    return str(uuid.uuid5(CHUNK_ID_NAMESPACE, f"{scope}:{path}:{source_sha}:{fp}:{ordinal}"))


def row_id(tenant: str | None, chunk: str) -> str:
    """The store row id of a chunk (``workspace_chunks`` is shared: no team)."""
    return stable_object_id(None, tenant, chunk)


def fingerprint(chunking: dict[str, Any]) -> str:
    """12 hex of SHA-256 over the chunking fields and the code versions."""
    data = json.dumps({"chunking": chunking, "versions": CODE_VERSIONS}, sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:12]


def publish_policy(meta: Path, sections: dict[str, Any]) -> str:
    """Publish or match the policy; returns the tree id.

    Each declared section must equal the published one (ValueError naming both and
    the file); missing sections are filled. The tree id is minted once.
    """
    rag = meta / "rag"
    rag.mkdir(parents=True, exist_ok=True)
    path = rag / "policy.json"
    lock = os.open(meta / "locks" / "rag-policy", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        published: dict[str, Any] = {}
        if path.exists():
            try:
                published = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise ValueError(
                    f"the tree's retrieval policy {path} is unreadable: {error}"
                ) from None
        changed = False
        if "tree_id" not in published:
            published["tree_id"] = uuid.uuid4().hex
            changed = True
        for name, value in sections.items():
            if value is None:
                continue
            if name in published and published[name] != value:
                if name == "versions":
                    raise ValueError(
                        f"the tree's published retrieval policy holds code versions "
                        f"{published[name]!r}, this code has {value!r} ({path})"
                    )
                raise ValueError(
                    f"the tree's published retrieval policy holds {name}={published[name]!r}; "
                    f"this card declares {name}={value!r} ({path})"
                )
            if name not in published:
                published[name] = value
                changed = True
        if changed:
            staging = rag / ".policy.tmp"
            staging.write_text(json.dumps(published, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(staging, path)
        return str(published["tree_id"])
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
