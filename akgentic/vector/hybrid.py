"""The one rule that fuses keyword and vector hits, shared by every consumer.

It is Weaviate's relative score fusion at alpha 0.7: the semantic side's raw cosine
scores are min-max normalised within the query, each keyword hit adds ``1 - alpha``,
and the union is ranked by ``alpha * norm + (1 - alpha) * keyword`` with a stable sort.
Backends never see query text; keeping the rule above them is what makes every
backend rank identically.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.vector.embedder import Embedder
    from akgentic.vector.protocol import VectorQuery

__all__ = [
    "DEFAULT_ALPHA",
    "OVERFETCH",
    "HybridResult",
    "fold",
    "fuse",
    "hybrid_search",
    "keyword_match",
    "normalise_scores",
    "semantic_scores",
]

logger = logging.getLogger(__name__)

DEFAULT_ALPHA = 0.7
OVERFETCH = 2
# Scores that differ below this are ties (1 - 0.7 is 0.30000000000000004).
_TOLERANCE_DIGITS = 9


@dataclass(frozen=True)
class HybridResult:
    """Every key ranked by fused score (not cut), and the raw cosine of vector hits."""

    ranked: list[tuple[str, float]] = field(default_factory=list)
    vector_scores: dict[str, float] = field(default_factory=dict)


def fold(text: str) -> str:
    """NFKC then casefold: ``STRASSE`` and ``Straße`` fold alike."""
    return unicodedata.normalize("NFKC", text).casefold()


def keyword_match(query: str, fields: Iterable[str]) -> bool:
    """Every whitespace-separated term of ``query`` is a substring of some field.

    A blank query matches nothing: a search with no terms is no keyword search.
    """
    terms = fold(query).split()
    if not terms:
        return False
    folded = [fold(f) for f in fields if f]
    return all(any(term in f for f in folded) for term in terms)


def normalise_scores(scores: dict[str, float]) -> dict[str, float]:
    """Min-max onto [0, 1]; when all are equal (a single hit too) each becomes 1.0."""
    if not scores:
        return {}
    low = min(scores.values())
    high = max(scores.values())
    if high - low <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    span = high - low
    return {key: (value - low) / span for key, value in scores.items()}


def fuse(
    keyword_keys: Sequence[str], vector_scores: dict[str, float], alpha: float = DEFAULT_ALPHA
) -> list[tuple[str, float]]:
    """Fuse keyword keys and raw vector scores; ties keep first-seen order.

    First seen means vector keys in backend order, then keyword-only keys in the
    caller's order. Every key of the union is returned, with ``alpha = 1`` keeping
    keyword-only keys at 0 and ``alpha = 0`` keeping vector-only keys at 0.
    """
    norm = normalise_scores(vector_scores)
    keyword = dict.fromkeys(keyword_keys, True)
    order = list(vector_scores) + [k for k in keyword if k not in vector_scores]
    fused = [
        (key, alpha * norm.get(key, 0.0) + ((1.0 - alpha) if key in keyword else 0.0))
        for key in order
    ]
    fused.sort(key=lambda item: -round(item[1], _TOLERANCE_DIGITS))
    return fused


def semantic_scores(
    store: Any,
    embedder: Embedder | None,
    collection: str,
    query_text: str,
    top_k: int,
    *,
    scope: str | None = None,
    path_prefix: str | None = None,
    query: VectorQuery | None = None,
) -> dict[str, float]:
    """``{ref_id: raw score}`` of the semantic side, in backend order; ``{}`` on any failure.

    Over-fetches ``top_k * OVERFETCH``; a repeated ref_id keeps its first (best)
    score; hits below ``query.score_threshold`` are dropped here, before normalising.
    """
    if not query_text.strip():
        # Blank text has no meaning to embed (and some servers refuse it): nothing to
        # rank on this side, which is an answer, not a failure worth a warning.
        return {}
    if store is None or embedder is None:
        logger.warning("semantic search of %r skipped: no store or embedder", collection)
        return {}
    try:
        vectors = embedder.embed([query_text])
        if not vectors or not vectors[0]:
            logger.warning("semantic search of %r skipped: empty query embedding", collection)
            return {}
        result = store.search(
            collection,
            vectors[0],
            top_k * OVERFETCH,
            scope=scope,
            path_prefix=path_prefix,
            query=query,
        )
    except Exception as exc:
        logger.warning("semantic search of %r failed: %s", collection, exc)
        return {}
    threshold = query.score_threshold if query is not None else None
    scores: dict[str, float] = {}
    for hit in result.hits:
        if threshold is not None and hit.score < threshold:
            continue
        scores.setdefault(hit.ref_id, hit.score)
    return scores


def hybrid_search(
    keyword_keys: Sequence[str],
    store: Any,
    embedder: Embedder | None,
    collection: str,
    query_text: str,
    top_k: int,
    *,
    alpha: float = DEFAULT_ALPHA,
    semantic: bool = True,
    scope: str | None = None,
    path_prefix: str | None = None,
    query: VectorQuery | None = None,
) -> HybridResult:
    """The whole rule: semantic side (unless ``semantic=False``), keyword side, fusion."""
    scores: dict[str, float] = {}
    if semantic:
        scores = semantic_scores(
            store,
            embedder,
            collection,
            query_text,
            top_k,
            scope=scope,
            path_prefix=path_prefix,
            query=query,
        )
    return HybridResult(ranked=fuse(keyword_keys, scores, alpha), vector_scores=scores)
