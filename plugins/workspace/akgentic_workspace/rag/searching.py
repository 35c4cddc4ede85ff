"""``workspace_rag_search`` and the list render: read side only, never a write, never raises.

The keyword leg runs over the composed text of every live set in scope (records and
text come from the record store's cache, refreshed from the change log), the vector
leg over ``workspace_chunks``; :func:`akgentic.vector.hybrid.fuse` ranks the union and
each key is kept only while a live set of this scope's records still lists it.
"""

from __future__ import annotations

import logging
import os
import weakref
from typing import Any

from akgentic.plugin_api import VectorQuery, fold, fuse
from akgentic_workspace.rag.context import RagContext
from akgentic_workspace.rag.models import RagSearchHit, RagSearchResult

__all__ = ["render_hits", "render_list", "search"]

log = logging.getLogger("akgentic_workspace.rag")

MAX_QUERY_CHARS = 8000
MAX_TERMS = 32
MAX_TOP_K = 50
MAX_HIT_CHARS = 60_000
_NOT_INDEXED = "No workspace files are indexed for retrieval"
_DONE = frozenset({"embedded", "keyword"})
_STATUS_ORDER = ("failed", "stale", "extraction", "splitting", "embedding", "pending")


class _View:
    """Every live chunk of a record store, flattened; rebuilt when its generation moves."""

    def __init__(self) -> None:
        self.generation = -1
        self.paths: list[str] = []
        self.entries: dict[str, tuple[dict[str, Any], dict[str, Any], int]] = {}
        self.keys: list[str] = []
        self.bodies: list[str] = []
        self.folded: dict[str, list[str]] = {}


#: Keyed by the store object itself, weakly: an ``id()`` key outlived its store, and a new
#: store at the same address and generation was served the old store's chunks.
_views: weakref.WeakKeyDictionary[Any, _View] = weakref.WeakKeyDictionary()


def _view(ctx: RagContext) -> _View:
    store = ctx.records
    records = store.snapshot()
    view = _views.setdefault(store, _View())
    if view.generation == store.generation:
        return view
    view.generation = store.generation
    view.paths = [r.get("path", "") for r in records.values()]
    view.entries = {}
    view.keys = []
    view.bodies = []
    folded: dict[str, list[str]] = {}
    for record in records.values():
        live_set = record.get("live")
        if not live_set:
            continue
        name = live_set["text"]
        texts = view.folded.get(name)
        if texts is None:
            texts = [fold(t) for t in store.get_text(name)]
        folded[name] = texts
        chunks = live_set.get("chunks", [])
        for chunk in chunks:
            view.entries[chunk["id"]] = (record, chunk, len(chunks))
            if chunk["ordinal"] < len(texts):
                view.keys.append(chunk["id"])
                view.bodies.append(texts[chunk["ordinal"]])
    view.folded = folded
    return view


def _prefix(ctx: RagContext, raw: str) -> tuple[str | None, str | None]:
    """(normalised prefix, note); the note alone means "refuse without a store call"."""
    if "*" in raw or "?" in raw:
        return None, (
            f"path_prefix {raw[:80]!r} contains '*' or '?': prefixes are matched literally "
            "and wildcards are not supported"
        )
    text = raw
    if text.startswith("/workspace/"):
        text = text[len("/workspace/") :]
    elif text == "/workspace":
        text = ""
    if "\x00" in text or text.startswith("/"):
        return None, f"path_prefix {raw[:80]!r} escapes the workspace"
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None, f"path_prefix {raw[:80]!r} escapes the workspace"
            parts.pop()
            continue
        parts.append(part)
    prefix = "/".join(parts)
    if prefix and text.endswith("/"):
        prefix += "/"
    return prefix, None


def search(
    ctx: RagContext, query: str, top_k: int, path_prefix: str, alpha: float, threshold: float
) -> RagSearchResult:
    """The whole search (see module docstring); every problem becomes the ``note``."""
    try:
        return _search(ctx, query, top_k, path_prefix, alpha, threshold)
    except Exception as error:  # the tool never raises
        log.warning("workspace_rag_search failed: %s", error, exc_info=True)
        return RagSearchResult(note=f"the search failed: {type(error).__name__}: {error}")


def _search(
    ctx: RagContext, query: str, top_k: int, path_prefix: str, alpha: float, threshold: float
) -> RagSearchResult:
    notes: list[str] = []
    if not query or not query.strip():
        return RagSearchResult(note="give the search a query")
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS]
        notes.append(f"the query was cut to {MAX_QUERY_CHARS} characters")
    if top_k < 1:
        notes.append(f"top_k={top_k} is below 1; 1 was used")
        top_k = 1
    elif top_k > MAX_TOP_K:
        notes.append(f"top_k={top_k} is over {MAX_TOP_K}; {MAX_TOP_K} was used")
        top_k = MAX_TOP_K
    prefix, refusal = _prefix(ctx, path_prefix or "")
    if refusal is not None:
        return RagSearchResult(note=refusal)
    view = _view(ctx)
    live = view.entries
    in_scope = sum(1 for p in view.paths if p.startswith(prefix)) if prefix else len(view.paths)
    if in_scope == 0:
        return RagSearchResult(note=_join([*notes, _NOT_INDEXED]))
    scores: dict[str, float] = {}
    if ctx.store is not None and ctx.embedder is not None:
        try:
            vectors = ctx.embedder.embed([query[: ctx.max_input_chars]])
            result = ctx.store.search(
                "workspace_chunks", vectors[0], top_k * 2, scope=ctx.scope,
                path_prefix=prefix or None, query=VectorQuery(score_threshold=threshold or None),
            )  # fmt: skip
            for hit in result.hits:
                if hit.score >= threshold:
                    scores.setdefault(hit.ref_id, hit.score)
        except Exception as error:
            log.warning("the vector leg of workspace_rag_search failed: %s", error)
            notes.append(f"keyword matches only: the vector search failed ({error})")
    else:
        notes.append(f"keyword matches only: {ctx.keyword_reason or 'no vector store'}")
    keyword = _keyword(view, query, prefix or "", top_k)
    ranked = fuse(keyword, scores, alpha)
    keyword_set = set(keyword)
    hits: list[RagSearchHit] = []
    total = 0
    stat_cache: dict[str, Any] = {}
    for key, _score in ranked:
        entry = live.get(key)
        if entry is None:
            continue  # orphaned, superseded or half-landed: never shown
        record, chunk, count = entry
        path = record["path"]
        if path not in stat_cache:
            try:
                st = os.lstat(os.path.join(ctx.tree, path))
                stat_cache[path] = [st.st_size, st.st_mtime_ns, st.st_ino]
            except OSError:
                stat_cache[path] = None
        now = stat_cache[path]
        if now is None:
            continue
        stale = (
            record.get("status") == "stale"
            or now[:2] != (record["live"].get("stat") or [None, None])[:2]
        )
        texts = ctx.records.get_text(record["live"]["text"])
        text = texts[chunk["ordinal"]] if chunk["ordinal"] < len(texts) else ""
        match = (
            "hybrid"
            if key in scores and key in keyword_set
            else "semantic"
            if key in scores
            else "keyword"
        )
        hits.append(
            RagSearchHit(
                path=path,
                ordinal=chunk["ordinal"],
                chunk_count=count,
                start_line=chunk.get("start_line"),
                end_line=chunk.get("end_line"),
                heading_path=list(chunk.get("heading_path") or []),
                score=scores.get(key),
                match=match,
                text=text,
                stale=stale,
            )
        )
        total += len(text)
        if len(hits) >= top_k or total >= MAX_HIT_CHARS:
            break
    if not hits:
        notes.append("Nothing in the retrieval index matched")
    return RagSearchResult(hits=hits, note=_join(notes))


def _keyword(view: _View, query: str, prefix: str, top_k: int) -> list[str]:
    """Keys of the chunks holding every term, most occurrences first (then path, ordinal)."""
    import heapq

    terms = list(dict.fromkeys(fold(query).split()))[:MAX_TERMS]
    if not terms:
        return []
    first = terms[0]
    picked = [i for i, body in enumerate(view.bodies) if first in body]
    for term in terms[1:]:
        bodies = view.bodies
        picked = [i for i in picked if term in bodies[i]]
    if prefix:
        entries, keys = view.entries, view.keys
        picked = [i for i in picked if entries[keys[i]][0]["path"].startswith(prefix)]
    bodies = view.bodies
    counts = [bodies[i].count(first) for i in picked]
    for term in terms[1:]:
        counts = [c + bodies[i].count(term) for c, i in zip(counts, picked, strict=True)]
    # The resolve step may drop some (deleted files): keep a margin past top_k.
    wanted = max(top_k * 4, 50)
    entries, keys = view.entries, view.keys

    def rank(n: int) -> tuple[int, str, int]:
        record, chunk, _ = entries[keys[picked[n]]]
        return (-counts[n], record["path"], chunk["ordinal"])

    order = heapq.nsmallest(wanted, range(len(picked)), key=rank)
    return [keys[picked[n]] for n in order]


def _join(notes: list[str]) -> str | None:
    return "; ".join(notes) if notes else None


def render_hits(result: RagSearchResult) -> str:
    """The command's text: one numbered line per hit, its text collapsed to 300 chars."""
    lines: list[str] = []
    for i, hit in enumerate(result.hits, 1):
        where = (
            f"{hit.path}:{hit.start_line}-{hit.end_line}"
            if hit.start_line is not None
            else f"{hit.path} (chunk {hit.ordinal + 1}/{hit.chunk_count})"
        )
        score = f", score {hit.score:.2f}" if hit.score is not None else ""
        stale = " [stale]" if hit.stale else ""
        body = " ".join(hit.text.split())
        if len(body) > 300:
            body = body[:300] + "…"
        lines.append(f"{i}. {where} ({hit.match}{score}){stale}\n   {body}")
    if result.note:
        lines.append(result.note)
    return "\n".join(lines) if lines else "Nothing in the retrieval index matched"


def _ordered(status: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Done rows newest first (the last finished run on top); the others by path."""
    if status in _DONE:
        return sorted(rows, key=lambda r: (-float(r.get("indexed_at") or 0.0), r.get("path", "")))
    return sorted(rows, key=lambda r: r.get("path", ""))


def render_list(ctx: RagContext, max_rows: int, max_pending: int) -> str:
    """``/workspace_rag_list``: counts by status, then rows by urgency, capped."""
    records = list(ctx.records.snapshot().values())
    if not records:
        return "No workspace files are indexed for retrieval."
    counts: dict[str, int] = {}
    for r in records:
        counts[r.get("status", "?")] = counts.get(r.get("status", "?"), 0) + 1
    head = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    lines = [f"**Workspace retrieval index:** {len(records)} file(s) — {head}"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(r.get("status", "?"), []).append(r)
    shown = 0
    hidden: list[str] = []
    for status in (*_STATUS_ORDER, "embedded", "keyword"):
        rows = _ordered(status, groups.get(status, []))
        cap = max_pending if status == "pending" else len(rows)
        kept = rows[: max(0, min(cap, max_rows - shown))]
        for r in kept:
            chunks = len((r.get("live") or {}).get("chunks", []))
            reason = f" — {r['reason']}" if r.get("reason") else ""
            lines.append(f"- {r['path']} [{status}] {chunks} chunk(s){reason}")
        shown += len(kept)
        if len(rows) > len(kept):
            hidden.append(f"{len(rows) - len(kept)} more {status}")
    if hidden:
        # One closing line whatever the number of statuses cut: the list stays bounded.
        lines.append("…and " + ", ".join(hidden))
    return "\n".join(lines)


def index_state(ctx: RagContext, max_rows: int) -> Any:
    """The ``RagIndexState`` snapshot: whole counts, rows by urgency up to ``max_rows``."""
    from akgentic_workspace.rag.models import RagFileRow, RagIndexState, RagStatus

    records = list(ctx.records.snapshot().values())
    counts: dict[str, int] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        status = r.get("status", "pending")
        counts[status] = counts.get(status, 0) + 1
        groups.setdefault(status, []).append(r)
    rows: list[RagFileRow] = []
    for status in (*_STATUS_ORDER, "embedded", "keyword"):
        for r in _ordered(status, groups.get(status, [])):
            if len(rows) >= max_rows:
                break
            rows.append(
                RagFileRow(
                    path=r["path"],
                    status=RagStatus(status),
                    chunk_count=len((r.get("live") or {}).get("chunks", [])),
                    reason=r.get("reason"),
                )
            )
    return RagIndexState(rows=rows, counts=counts)
