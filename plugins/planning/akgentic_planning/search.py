"""``search_planning``: field filters first, then keyword, vector or hybrid ranking."""

from __future__ import annotations

import heapq
import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from akgentic.plugin_api import (
    SEMANTIC_DISABLED,
    KeywordIndex,
    RetriableError,
    unavailable_sentence,
)
from akgentic_planning.models import COLLECTION, Task

__all__ = [
    "MAX_TOP_K",
    "SEMANTIC_DISABLED",
    "SearchMode",
    "SearchRequest",
    "check_bounds",
    "search_tasks",
    "task_line",
    "unavailable_sentence",
]

logger = logging.getLogger(__name__)

MAX_TOP_K = 100
SearchMode = Literal["hybrid", "vector", "keyword"]


class SearchRequest(BaseModel):
    """One search, as the card hands it to the actor (None budgets: the card's)."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = None
    mode: SearchMode = "hybrid"
    status: str | None = None
    owner: str | None = None
    creator: str | None = None
    top_k: int | None = None
    score_threshold: float | None = None


def check_bounds(top_k: int | None, score_threshold: float | None) -> int | None:
    """``top_k`` clamped to :data:`MAX_TOP_K`; RetriableError for out-of-range values."""
    if top_k is not None:
        if isinstance(top_k, bool) or top_k < 1:
            raise RetriableError(f"top_k must be at least 1; got {top_k}.")
        top_k = min(top_k, MAX_TOP_K)
    if score_threshold is not None and not 0.0 <= score_threshold <= 1.0:
        raise RetriableError(f"score_threshold must be between 0 and 1; got {score_threshold}.")
    return top_k


def task_line(task: Task, suffix: str = "") -> str:
    """``Task <id>: <description> [<status>] (Owner: .., Creator: ..)`` plus a score note."""
    owner = task.owner or "unassigned"
    return (
        f"Task {task.id}: {task.description} [{task.status}] "
        f"(Owner: {owner}, Creator: {task.creator}){suffix}"
    )


def search_tasks(
    tasks: list[Task],
    request: SearchRequest,
    *,
    store: Any,
    embedder: Any,
    top_k_default: int,
    threshold_default: float,
    alpha: float,
    words: KeywordIndex[int] | None = None,
    positions: dict[int, int] | None = None,
) -> list[str]:
    """The lines of the matching tasks, best first (board order without a query).

    ``words`` (every task of ``tasks`` indexed by its description) and ``positions``
    (task id to its place in ``tasks``), when the caller keeps them, spare each query
    a pass over the board.
    """
    from akgentic.plugin_api import VectorQuery, hybrid_search, keyword_match

    top_k = check_bounds(request.top_k, request.score_threshold) or top_k_default
    threshold = (
        request.score_threshold if request.score_threshold is not None else threshold_default
    )
    narrowed = (
        request.status is not None or request.owner is not None or request.creator is not None
    )
    filtered = (
        [
            t
            for t in tasks
            if (request.status is None or t.status == request.status)
            and (request.owner is None or t.owner == request.owner)
            and (request.creator is None or t.creator == request.creator)
        ]
        if narrowed
        else tasks
    )
    query = (request.query or "").strip()
    if not query:
        return [task_line(t) for t in filtered]
    semantic = request.mode != "keyword" and store is not None and embedder is not None
    if positions is None:
        positions = {t.id: i for i, t in enumerate(tasks)}
    allowed = {t.id for t in filtered} if narrowed else None
    keyword_keys: list[str] = []
    if request.mode != "vector" and words is not None:
        hits = sorted(words.search(query))
        keyword_keys = [str(i) for i in hits if allowed is None or i in allowed]
    elif request.mode != "vector":
        keyword_keys = [
            str(t.id)
            for t in sorted(filtered, key=lambda t: t.id)
            if keyword_match(query, [t.description])
        ]
    # The store applies the field filters before its top_k cut, so none is wasted.
    narrowing: dict[str, Any] | None = None
    if allowed is not None:
        if not allowed:
            return []
        narrowing = {"ref_id": [str(t.id) for t in filtered]}
    result = hybrid_search(
        keyword_keys,
        store,
        embedder,
        COLLECTION,
        query,
        top_k,
        alpha=alpha,
        semantic=semantic,
        query=VectorQuery(score_threshold=threshold, filters=narrowing),
    )
    keyword_set = set(keyword_keys)
    scored: list[tuple[float, int, Task, str]] = []
    for key, fused in result.ranked:
        task_id = _task_id(key)
        if task_id is None:
            logger.warning("search_planning: ref_id %r is not a task id; skipped", key)
            continue
        position = positions.get(task_id)
        if position is None or (allowed is not None and task_id not in allowed):
            continue  # a stale row, or a task the field filters drop
        task = tasks[position]
        raw = result.vector_scores.get(key)
        if raw is not None and key in keyword_set:
            note = f" (hybrid: {fused:.2f})"
        elif raw is not None:
            note = f" (semantic: {raw:.2f})"
        else:
            note = " (keyword match)"
        scored.append((fused, position, task, note))
    best = heapq.nsmallest(top_k, scored, key=lambda item: (-round(item[0], 9), item[1]))
    return [task_line(task, note) for _score, _pos, task, note in best]


def _task_id(ref_id: str) -> int | None:
    """The task id a vector row's ``ref_id`` names, or None when it names none."""
    try:
        task_id = int(ref_id)
    except ValueError:
        return None
    return task_id if str(task_id) == ref_id else None
