"""The index call on the caller's thread: walk, decide, write ``pending`` records, reconcile.

Nothing here extracts, splits or embeds: the pipeline does, after the call returns.
A file is *current* when its live set matches by ``(size, mtime_ns, inode)`` (no read),
else by SHA-256; a run in flight on the same bytes and a permanent failure at the
same digest count as current too, so two callers never queue one file twice. A
permanent failure counts only for the fingerprint it happened under: after an upgrade
of the splitter or extractor the file is tried once more.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RetriableError
from akgentic_workspace.rag.context import RagContext
from akgentic_workspace.rag.errors import SourceError
from akgentic_workspace.rag.extract import docs_available
from akgentic_workspace.rag.models import DEFAULT_RAGIGNORE
from akgentic_workspace.rag.policy import superseded
from akgentic_workspace.rag.records import Record, path_hash
from akgentic_workspace.rag.walk import DOCUMENT_TYPES, TEXT_TYPES, WalkedFile, load_ignore, walk

__all__ = ["index_tree", "mark_stale", "queue_keys"]

log = logging.getLogger("akgentic_workspace.rag")

MAX_SOURCE_BYTES = 16 * 1024 * 1024
_QUEUED_STATES = frozenset({"pending", "extraction", "splitting", "embedding"})


def _under(key: str, prefix: str) -> bool:
    return not prefix or key == prefix or key.startswith(prefix + "/")


def _digest(ctx: RagContext, key: str) -> str | None:
    from akgentic_workspace.rag.pipeline import read_source

    try:
        return hashlib.sha256(read_source(ctx.tree, key)).hexdigest()
    except (OSError, SourceError):
        return None


def _decide(
    ctx: RagContext, record: Record | None, f: WalkedFile, force: bool
) -> tuple[str, str | None]:
    """``("current"|"queue", sha)`` for one walked file (the caller holds its lock)."""
    triple = [f.size, f.mtime_ns, f.ino]
    vectors_needed = ctx.store is not None
    if record is not None and not force:
        same_stat = record.get("stat") == triple
        live = record.get("live") or {}
        live_ok = live.get("fingerprint") == ctx.fingerprint and (
            live.get("embedded") or not vectors_needed
        )
        status = record.get("status")
        if same_stat:
            if (
                live_ok
                and status in ("embedded", "keyword")
                and live.get("sha") == record.get("sha")
            ):
                return "current", record.get("sha")
            if status in _QUEUED_STATES:
                return "current", record.get("sha")
            if _failed_for_good(ctx, record):
                return "current", record.get("sha")
    # An unchanged stat triple keeps the recorded digest: a keyword set that only needs
    # vectors, or a transient failure, is requeued without reading the file.
    same = record is not None and record.get("stat") == triple and bool(record.get("sha"))
    sha = str(record["sha"]) if same and record is not None else _digest(ctx, f.key)
    if sha is None:
        return "queue", None
    if record is not None and not force:
        live = record.get("live") or {}
        status = record.get("status")
        if status in _QUEUED_STATES and record.get("sha") == sha:
            return "current", sha
        if _failed_for_good(ctx, record) and record.get("sha") == sha:
            return "current", sha
        if (
            live.get("sha") == sha
            and live.get("fingerprint") == ctx.fingerprint
            and (live.get("embedded") or not vectors_needed)
            and status in ("embedded", "keyword")
        ):
            return "current", sha
    return "queue", sha


def _failed_for_good(ctx: RagContext, record: Record) -> bool:
    """A permanent failure under this code (records from before the field count as ours)."""
    return (
        record.get("status") == "failed"
        and bool(record.get("permanent"))
        and record.get("failed_fingerprint") in (None, ctx.fingerprint)
    )


def _settled(ctx: RagContext, record: Record, f: WalkedFile) -> bool:
    """The cached record is final at this exact stat triple and fingerprint."""
    if record.get("stat") != [f.size, f.mtime_ns, f.ino] or f.size > MAX_SOURCE_BYTES:
        return False
    status = record.get("status")
    if status == "failed":
        return _failed_for_good(ctx, record)
    live = record.get("live") or {}
    if status not in ("embedded", "keyword") or live.get("fingerprint") != ctx.fingerprint:
        return False
    return bool(live.get("embedded")) or ctx.store is None


def _pending(record: Record | None, f: WalkedFile, sha: str | None) -> Record:
    fresh: Record = (
        dict(record) if record is not None else {"path": f.key, "live": None, "owed": []}
    )
    fresh.update(
        path=f.key,
        status="pending",
        stat=[f.size, f.mtime_ns, f.ino],
        sha=sha or "",
        size=f.size,
        claim=None,
        next=None,
        reason=None,
        permanent=False,
        moves=0,
        dirty=False,
    )
    if record is not None and record.get("next") is not None:
        live_ids = {c["id"] for c in (record.get("live") or {}).get("chunks", [])}
        owed = set(fresh.get("owed") or [])
        owed.update(c["id"] for c in record["next"]["chunks"] if c["id"] not in live_ids)
        fresh["owed"] = sorted(owed)
    return fresh


def _too_large(record: Record | None, f: WalkedFile) -> Record:
    fresh: Record = (
        dict(record) if record is not None else {"path": f.key, "live": None, "owed": []}
    )
    fresh.update(
        path=f.key, status="failed", stat=[f.size, f.mtime_ns, f.ino], sha="", size=f.size,
        claim=None, next=None, reason="over the 16 MiB limit", permanent=True,
        failed_fingerprint=None,
    )  # fmt: skip
    return fresh


def _kind(key: str, docs_ok: bool) -> str:
    ext = os.path.splitext(key)[1].lower()
    if ext in TEXT_TYPES:
        return "text"
    if ext in DOCUMENT_TYPES:
        return "document" if docs_ok and docs_available(ext) else "needs_docs"
    return "unsupported"


def _queue(ctx: RagContext, files: list[WalkedFile], force: bool, counts: dict[str, int]) -> None:
    store = ctx.records
    limit = ctx.settings.index.max_files
    known = store.snapshot()
    total = len(known)
    # Stripe by stripe: one lock per 256th of the records, held over its files.
    by_stripe: dict[str, list[WalkedFile]] = {}
    for f in files:
        by_stripe.setdefault(path_hash(f.key)[:2], []).append(f)
    for stripe in sorted(by_stripe):
        group = by_stripe[stripe]
        with store.locked([stripe]):
            for f in group:
                hexkey = path_hash(f.key)
                cached = known.get(hexkey)
                if not force and cached is not None and _settled(ctx, cached, f):
                    # Unchanged since its last run (stat triple): no lock-held re-read.
                    counts["current"] += 1
                    continue
                record = store.read(hexkey)
                if record is None and total >= limit:
                    counts["over_limit"] += 1
                    continue
                if f.size > MAX_SOURCE_BYTES:
                    counts["too_large"] += 1
                    if record is None or record.get("stat") != [f.size, f.mtime_ns, f.ino]:
                        total += record is None
                        store.write(_too_large(record, f))
                    continue
                verdict, sha = _decide(ctx, record, f, force)
                if verdict == "current":
                    counts["current"] += 1
                    triple = [f.size, f.mtime_ns, f.ino]
                    live = (record or {}).get("live") or {}
                    if record is not None and live.get("sha") == sha and live.get("stat") != triple:
                        # Same bytes under a new stat (touched, rewritten alike): remember it.
                        live["stat"] = triple
                        record["stat"] = triple
                        if record.get("status") == "stale" and record.get("claim") is None:
                            record["status"] = "embedded" if live.get("embedded") else "keyword"
                        store.write(record)
                    continue
                total += record is None
                store.write(_pending(record, f, sha))
                counts["queued"] += 1


def _reconcile(
    ctx: RagContext, prefix: str, seen: set[str], unlistable: list[str], pipeline_id: str | None
) -> int:
    """Forget records under ``prefix`` the complete walk missed (their rows removed first)."""
    from akgentic_workspace.rag.pipeline import IN_FLIGHT

    store = ctx.records
    removed = 0
    for hexkey, record in list(store.snapshot().items()):
        key = record.get("path", "")
        if key in seen or not _under(key, prefix):
            continue
        if any(_under(key, d) for d in unlistable):
            continue
        with store.locked([hexkey]):
            now = store.read(hexkey)
            if now is None:
                continue
            if now.get("status") in IN_FLIGHT and now.get("claim") is not None:
                continue
            ids = [c["id"] for c in (now.get("live") or {}).get("chunks", [])]
            ids += [c["id"] for c in (now.get("next") or {}).get("chunks", [])]
            ids += list(now.get("owed") or [])
            if ids and ctx.store is not None:
                try:
                    ctx.store.remove("workspace_chunks", ids, scope=ctx.scope)
                except Exception as error:
                    log.warning("removing the rows of %s failed: %s", key, error)
                    now["status"] = "stale"
                    now["owed"] = sorted(set(ids))
                    store.write(now)
                    continue
            elif ids and ctx.store is None and (now.get("live") or {}).get("embedded"):
                now["status"] = "stale"
                now["owed"] = sorted(set(ids))
                store.write(now)
                continue
            text = (now.get("live") or {}).get("text")
            store.forget(key)
            if text:
                store.drop_text(text)
            removed += 1
    return removed


def index_tree(ctx: RagContext, key: str, force: bool, pipeline_id: str | None = None) -> str:
    """The body of ``workspace_rag_index`` (``key`` already canonical)."""
    refusal = superseded(Path(ctx.settings.meta))
    if refusal is not None:
        raise RetriableError(f"Retrieval indexing is not available for this workspace: {refusal}")
    tree = ctx.tree
    counts = dict.fromkeys(
        ("queued", "current", "unsupported", "ignored", "removed", "too_large", "needs_docs",
         "over_limit"), 0
    )  # fmt: skip
    patterns = ctx.settings.index.ragignore
    spec = load_ignore(
        __import__("pathlib").Path(tree), list(DEFAULT_RAGIGNORE if patterns is None else patterns)
    )
    target = os.path.join(tree, key) if key else tree
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    import stat as stat_mod

    docs_ok = ctx.settings.docs_enabled
    walked_files: list[WalkedFile] = []
    complete = True
    unlistable: list[str] = []
    if st is None:
        if not any(_under(r.get("path", ""), key) for r in ctx.records.snapshot().values()):
            raise RetriableError(f"Nothing to index at {key or '.'}")
    elif stat_mod.S_ISDIR(st.st_mode):
        result = walk(__import__("pathlib").Path(tree), key, spec, ctx.walk_budget_s)
        walked_files, complete, unlistable = result.files, result.complete, result.unlistable
        counts["ignored"] = result.ignored
    elif stat_mod.S_ISREG(st.st_mode):
        walked_files = [WalkedFile(key, st.st_size, st.st_mtime_ns, st.st_ino)]
    indexable: list[WalkedFile] = []
    for f in walked_files:
        kind = _kind(f.key, docs_ok)
        if kind == "unsupported":
            counts["unsupported"] += 1
        elif kind == "needs_docs":
            counts["unsupported"] += 1
            counts["needs_docs"] += 1
        else:
            indexable.append(f)
    _queue(ctx, indexable, force, counts)
    if complete:
        seen = {f.key for f in indexable}
        counts["removed"] = _reconcile(ctx, key, seen, unlistable, pipeline_id)
    text = (
        f"{counts['queued']} file(s) queued, {counts['current']} already current, "
        f"{counts['unsupported']} unsupported, {counts['ignored']} ignored, "
        f"{counts['removed']} removed"
    )
    tails = []
    if counts["too_large"]:
        tails.append(f"{counts['too_large']} too large (over 16 MiB)")
    if counts["needs_docs"]:
        tails.append(
            f"{counts['needs_docs']} document(s) need the docs extra: "
            f'pip install "akgentic-workspace[docs]"'
        )
    if counts["over_limit"]:
        tails.append(
            f"{counts['over_limit']} not queued: index limit of "
            f"{ctx.settings.index.max_files} files"
        )
    if ctx.keyword_reason is not None:
        tails.append(f"keyword only: {ctx.keyword_reason}")
    if not complete:
        tails.append("walk stopped after 10 s — call again")
    return "; ".join([text, *tails])


def queue_keys(ctx: RagContext, keys: list[str], *, force: bool) -> int:
    """Queue single files (uploads, re-index after writes); missing or odd ones skipped."""
    refusal = superseded(Path(ctx.settings.meta))
    if refusal is not None:
        log.warning("not queued: %s", refusal)
        return 0
    counts = dict.fromkeys(("queued", "current", "too_large", "over_limit"), 0)
    files = []
    for key in keys:
        try:
            st = os.lstat(os.path.join(ctx.tree, key))
        except OSError:
            log.info("not queued (missing): %s", key)
            continue
        import stat as stat_mod

        if not stat_mod.S_ISREG(st.st_mode) or _kind(key, ctx.settings.docs_enabled) not in (
            "text",
            "document",
        ):
            log.info("not queued (unsupported): %s", key)
            continue
        files.append(WalkedFile(key, st.st_size, st.st_mtime_ns, st.st_ino))
    _queue(ctx, files, force, counts)
    return counts["queued"]


def mark_stale(store: Any, keys: list[str]) -> list[str]:
    """After a published mutation: each touched path with a record turns ``stale``.

    A path in flight is flagged (``dirty``) so its run ends ``stale``. Never raises.
    Returns the keys that had records.
    """
    marked: list[str] = []
    try:
        known = store.snapshot()
        targets: list[str] = []
        for key in keys:
            hexkey = path_hash(key)
            if hexkey in known or (store.records / f"{hexkey}.json").exists():
                targets.append(key)
            else:  # a directory removed: its files' records
                targets.extend(
                    r["path"] for r in known.values() if _under(r.get("path", ""), key) and key
                )
        for key in dict.fromkeys(targets):
            hexkey = path_hash(key)
            with store.locked([hexkey]):
                record: dict[str, Any] | None = store.read(hexkey)
                if record is None:
                    continue
                if record.get("claim") is not None:
                    record["dirty"] = True
                else:
                    record["status"] = "stale"
                store.write(record)
                marked.append(key)
    except Exception as error:  # marking never fails the mutation
        log.warning("marking written files stale failed: %s", error)
    return marked
