"""The tree's published retrieval policy (``<meta>/rag/policy.json``) and chunk identity.

Code versions. The policy names the version of each component whose output the index
holds: the splitter (:data:`~akgentic_workspace.rag.split.SPLITTER_VERSION`) and the
document extractor, which is the read path's own
:data:`~akgentic_workspace.documents.EXTRACTOR_VERSION` so that the index and
``workspace_read`` can never disagree about what a document says. A version is a
family and a trailing number (``markitdown-2`` = family ``markitdown-``, number 2);
two versions of one component are ordered by that number when their families are
equal and the numbers differ; any other difference (``pdfminer-3`` against
``markitdown-2``, ``markitdown-02`` against ``markitdown-2``) is unordered. Against the
published versions this code is

* equal when every component is equal: the bind passes;
* newer when no component is older or unordered and at least one is newer, or is a
  component the published policy does not name yet: the policy is republished with
  this code's versions. The chunking fingerprint covers the versions, so every record
  whose live set carries the old fingerprint is queued by the next index pass, while
  search keeps serving those old live chunks until their replacement lands;
* refused otherwise (a component older, unordered, or unknown to this code): an older
  release cannot tell what a newer one's records mean, so it must not rewrite them.
  A process that bound before the republish learns it from :func:`superseded`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import uuid
from pathlib import Path
from typing import Any

from akgentic.plugin_api import stable_object_id
from akgentic_workspace.documents import EXTRACTOR_VERSION
from akgentic_workspace.rag.split import SPLITTER_VERSION

__all__ = [
    "CHUNK_ID_NAMESPACE",
    "CODE_VERSIONS",
    "chunk_id",
    "compare_versions",
    "fingerprint",
    "publish_policy",
    "row_id",
    "superseded",
]

CHUNK_ID_NAMESPACE = uuid.UUID("2f5c1a90-7b64-5c3e-9f21-0d8a4c6b1e73")
CODE_VERSIONS = {"splitter": SPLITTER_VERSION, "extractor": EXTRACTOR_VERSION}

log = logging.getLogger("akgentic_workspace.rag")

_VERSION = re.compile(r"(?P<family>.*?)(?P<number>\d+)")


def _parse(version: object) -> tuple[str, int] | None:
    if not isinstance(version, str):
        return None
    match = _VERSION.fullmatch(version)
    if match is None:
        return None
    return match["family"], int(match["number"])


def compare_versions(published: object, ours: dict[str, str]) -> tuple[str, str]:
    """``(verdict, detail)`` of this code's versions against the published ones.

    The verdict is ``equal``, ``newer``, ``older`` or ``unordered`` (see the module
    docstring); ``detail`` names the components that decided it.
    """
    if not isinstance(published, dict):
        return "unordered", f"the published versions {published!r} are not a mapping"
    newer: list[str] = []
    older: list[str] = []
    unordered: list[str] = []
    for name in sorted(set(published) | set(ours)):
        if name not in ours:
            older.append(f"{name} {published[name]!r} is unknown to this code")
            continue
        if name not in published:
            newer.append(f"{name} {ours[name]!r} is new")
            continue
        if published[name] == ours[name]:
            continue
        theirs, mine = _parse(published[name]), _parse(ours[name])
        if theirs is None or mine is None or theirs[0] != mine[0] or theirs[1] == mine[1]:
            unordered.append(f"{name} {published[name]!r} and {ours[name]!r} cannot be ordered")
        elif mine[1] > theirs[1]:
            newer.append(f"{name} {published[name]!r} -> {ours[name]!r}")
        else:
            older.append(f"{name} {published[name]!r} is newer than {ours[name]!r}")
    if older:
        return "older", "; ".join(older + unordered)
    if unordered:
        return "unordered", "; ".join(unordered)
    if newer:
        return "newer", "; ".join(newer)
    return "equal", ""


def chunk_id(scope: str, path: str, source_sha: str, fp: str, ordinal: int) -> str:
    """Deterministic id of one chunk: equal inputs give equal ids in any process."""
    return str(uuid.uuid5(CHUNK_ID_NAMESPACE, f"{scope}:{path}:{source_sha}:{fp}:{ordinal}"))


def row_id(tenant: str | None, chunk: str) -> str:
    """The store row id of a chunk (``workspace_chunks`` is shared: no team)."""
    return stable_object_id(None, tenant, chunk)


def fingerprint(chunking: dict[str, Any], versions: dict[str, str] | None = None) -> str:
    """12 hex of SHA-256 over the chunking fields and the code versions (default: ours)."""
    data = json.dumps(
        {"chunking": chunking, "versions": CODE_VERSIONS if versions is None else versions},
        sort_keys=True,
    )
    return hashlib.sha256(data.encode()).hexdigest()[:12]


def _refusal(published: object, path: Path) -> str | None:
    verdict, detail = compare_versions(published, CODE_VERSIONS)
    if verdict not in ("older", "unordered"):
        return None
    return (
        f"the tree's published retrieval policy holds code versions {published!r}, this "
        f"code has {CODE_VERSIONS!r} ({detail}); only the same or a newer "
        f"akgentic-workspace can use the index in {path}"
    )


_seen: dict[str, tuple[tuple[int, int, int], str | None]] = {}


def superseded(meta: Path) -> str | None:
    """The refusal when newer code republished the policy since this code bound, else None.

    A process that bound before an upgrade must stop writing records: it would index
    every file again under its own, older fingerprint. The file is re-read only when
    its stat changes, so the check is one ``stat`` per call.
    """
    path = meta / "rag" / "policy.json"
    try:
        st = path.stat()
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _seen.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        published = json.loads(path.read_text(encoding="utf-8")).get("versions", {})
    except (OSError, ValueError, AttributeError):
        return None  # a bind reports an unreadable policy; a pass keeps going
    answer = _refusal(published, path)
    _seen[str(path)] = (key, answer)
    return answer


def publish_policy(meta: Path, sections: dict[str, Any]) -> str:
    """Publish or match the policy; returns the tree id.

    Each declared section must equal the published one (ValueError naming both and
    the file), except ``versions``, which follows the order of the module docstring;
    missing sections are filled. The tree id is minted once.
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
            if name == "versions" and name in published and published[name] != value:
                verdict, detail = compare_versions(published[name], value)
                if verdict in ("older", "unordered"):
                    raise ValueError(
                        f"the tree's published retrieval policy holds code versions "
                        f"{published[name]!r}, this code has {value!r} ({detail}); only "
                        f"the same or a newer akgentic-workspace can use the index in {path}"
                    )
                if verdict == "newer":
                    log.warning(
                        "retrieval policy %s republished for newer code (%s): the next "
                        "index pass re-indexes every file",
                        path,
                        detail,
                    )
                    published[name] = value
                    changed = True
                continue
            if name in published and published[name] != value:
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
