"""Graph search: keyword, vector and hybrid hits, their expansions, and the rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from akgentic.plugin_api import RetriableError
from akgentic_knowledge_graph.graph import GraphIndex
from akgentic_knowledge_graph.models import COLLECTION, Entity, Relation, SearchQuery

__all__ = ["MAX_TOP_K", "SearchOutcome", "check_query", "render", "run_search"]

MAX_TOP_K = 100
MAX_PATH_HITS = 5
MAX_PATH_PAIRS = 10
EMPTY_QUERY = "Search query is empty; give a word or phrase."


@dataclass
class SearchOutcome:
    """Scored hits in rank order, and the expansions asked for."""

    hits: list[tuple[Entity | Relation, float]] = field(default_factory=list)
    neighbors: list[str] = field(default_factory=list)
    connected: list[Relation] = field(default_factory=list)
    paths: list[list[Entity | Relation]] = field(default_factory=list)


def check_query(query: SearchQuery) -> SearchQuery:
    """RetriableError for a blank query or out-of-range budgets; ``top_k`` clamped."""
    if not query.query.strip():
        raise RetriableError(EMPTY_QUERY)
    update: dict[str, Any] = {}
    if query.top_k is not None:
        if query.top_k < 1:
            raise RetriableError(f"top_k must be at least 1; got {query.top_k}.")
        update["top_k"] = min(query.top_k, MAX_TOP_K)
    threshold = query.score_threshold
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise RetriableError(f"score_threshold must be between 0 and 1; got {threshold}.")
    return query.model_copy(update=update) if update else query


def _items(entities: list[Entity], relations: list[Relation]) -> list[Entity | Relation]:
    """Entity hits, then relation hits (graph order within each)."""
    items: list[Entity | Relation] = [*entities]
    items.extend(relations)
    return items


def _resolve(index: GraphIndex, key: str) -> Entity | Relation | None:
    try:
        uid = UUID(key)
    except ValueError:
        return None
    return index.by_id.get(uid) or index.relations.get(uid)


def run_search(
    index: GraphIndex,
    query: SearchQuery,
    *,
    store: Any,
    embedder: Any,
    top_k_default: int,
    threshold_default: float,
    alpha: float,
) -> SearchOutcome:
    """Rank the graph for ``query`` (already checked) and compute its expansions."""
    from akgentic.plugin_api import VectorQuery, hybrid_search, semantic_scores

    top_k = query.top_k or top_k_default
    threshold = query.score_threshold if query.score_threshold is not None else threshold_default
    text = query.query.strip()
    outcome = SearchOutcome()
    if query.mode == "keyword":
        entities, relations = index.keyword_hits(text, top_k)
        outcome.hits = [(item, 1.0) for item in _items(entities, relations)]
    elif query.mode == "vector":
        scores = semantic_scores(
            store, embedder, COLLECTION, text, top_k, query=VectorQuery(score_threshold=threshold)
        )
        for key, score in scores.items():
            item = _resolve(index, key)
            if item is not None and score >= threshold:
                outcome.hits.append((item, score))
        outcome.hits = outcome.hits[:top_k]
    else:
        entities, relations = index.keyword_hits(text, top_k * 2)
        keys = [str(item.id) for item in _items(entities, relations)]
        result = hybrid_search(
            keys,
            store,
            embedder,
            COLLECTION,
            text,
            top_k,
            alpha=alpha,
            semantic=store is not None and embedder is not None,
            query=VectorQuery(score_threshold=threshold),
        )
        for key, fused in result.ranked:
            item = _resolve(index, key)
            if item is not None:
                outcome.hits.append((item, fused))
            if len(outcome.hits) >= top_k:
                break
    _expand(index, query, outcome)
    return outcome


def _expand(index: GraphIndex, query: SearchQuery, outcome: SearchOutcome) -> None:
    hit_entities = [item for item, _score in outcome.hits if isinstance(item, Entity)]
    names = {e.name for e in hit_entities}
    if query.include_neighbors:
        seen: dict[str, None] = {}
        for entity in hit_entities:
            for other in index.neighbours(entity.name):
                if other not in names:
                    seen[other] = None
        outcome.neighbors = list(seen)
    if query.include_edges:
        touching: dict[UUID, Relation] = {}
        for entity in hit_entities:
            for rid in index.adjacent.get(entity.name, {}):
                touching[rid] = index.relations[rid]
        outcome.connected = list(touching.values())
    if query.find_paths:
        top = hit_entities[:MAX_PATH_HITS]
        pairs = [(a, b) for i, a in enumerate(top) for b in top[i + 1 :]][:MAX_PATH_PAIRS]
        for a, b in pairs:
            path = index.shortest_path(a.name, b.name)
            if path is not None and len(path) > 1:
                outcome.paths.append(path)


def _relation_line(r: Relation) -> str:
    return f"{r.from_entity} --[{r.relation_type}]--> {r.to_entity}"


def render(outcome: SearchOutcome) -> str:
    """The text the model reads: hits with scores, then non-empty expansion blocks."""
    if not outcome.hits:
        return "No results found."
    lines = ["Search Results:"]
    for item, score in outcome.hits:
        if isinstance(item, Entity):
            lines.append(
                f"  - [entity] {item.name} ({item.entity_type}): {item.description} "
                f"(score: {score:.2f})"
            )
        else:
            lines.append(f"  - [relation] {_relation_line(item)} (score: {score:.2f})")
    if outcome.neighbors:
        lines.append("Neighbors:")
        lines += [f"  - {name}" for name in outcome.neighbors]
    if outcome.connected:
        lines.append("Connected relations:")
        lines += [f"  - {_relation_line(r)}" for r in outcome.connected]
    if outcome.paths:
        lines.append("Paths:")
        for path in outcome.paths:
            parts = [p.name if isinstance(p, Entity) else f"--[{p.relation_type}]--" for p in path]
            lines.append("  - " + " ".join(parts))
    return "\n".join(lines)
