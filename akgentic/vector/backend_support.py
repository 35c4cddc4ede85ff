"""The steps every vector backend takes the same way, written once.

Each backend differs in how it talks to its engine, not in what it accepts or how it
answers: the argument checks before a search or a remove, the team a row is stamped
with, which duplicate of a batch survives, the fields a cluster row carries, how a
filter value is typed, and how engine hits become :class:`SearchHit` objects. Keeping
those here means a rule changes in one place and every backend refuses the same input
with the same words. Nothing here imports a vector library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from akgentic.vector.protocol import (
    Scalar,
    SearchHit,
    VectorEntry,
    VectorQuery,
    check_filters,
    check_path_prefix,
    check_top_k,
    check_vector,
    clamp_score,
    is_shared,
    require_scope,
    require_team,
    row_id_factory,
)

__all__ = [
    "IMPOSSIBLE",
    "STRING_FIELDS",
    "SearchArgs",
    "check_entries",
    "check_remove",
    "check_search",
    "check_team_delete",
    "hit_from",
    "latest_rows",
    "ranked_hits",
    "row_fields",
    "typed_values",
    "writer_team",
]

#: Row fields stored as text; ``ordinal`` is the one integer field.
STRING_FIELDS: frozenset[str] = frozenset({"ref_type", "ref_id", "text", "scope", "path"})

_OPTIONAL_FIELDS = ("scope", "path", "ordinal")


class _Impossible:
    """Marker: a filter can match nothing (no value of the right type for its field)."""

    def __repr__(self) -> str:
        return "IMPOSSIBLE"


#: Returned by a filter builder when the query cannot match; the search answers nothing.
IMPOSSIBLE: Any = _Impossible()


class SearchArgs(NamedTuple):
    """A search's checked arguments: the filters by field, the score floor, engine knobs."""

    filters: dict[str, list[Scalar]]
    threshold: float | None
    params: dict[str, Any]


def check_search(
    collection: str,
    team_id: str | None,
    top_k: int,
    scope: str | None,
    path_prefix: str | None,
    query: VectorQuery | None,
) -> SearchArgs:
    """Refuse a bad search before any engine call; the checked arguments otherwise."""
    check_top_k(top_k)
    check_path_prefix(path_prefix)
    filters = check_filters(query)
    require_scope(collection, scope)
    require_team(collection, team_id)
    if query is None:
        return SearchArgs(filters, None, {})
    return SearchArgs(filters, query.score_threshold, dict(query.params))


def check_remove(
    collection: str, team_id: str | None, scope: str | None, path_prefix: str | None
) -> None:
    """Refuse a bad remove before any engine call."""
    check_path_prefix(path_prefix)
    require_scope(collection, scope)
    require_team(collection, team_id)


def check_team_delete(collection: str) -> None:
    """An admin sweep never deletes by team in a shared collection (any capitalisation)."""
    if is_shared(collection):
        raise ValueError(
            f"Collection '{collection}' is shared across teams; its rows are never deleted by team"
        )


def writer_team(collection: str, team_id: str | None) -> str:
    """The team a written row is stamped with: none (``""``) in a shared collection."""
    return "" if is_shared(collection) else (team_id or "")


def check_entries(entries: Sequence[VectorEntry], dimension: int) -> None:
    """Every vector of a batch is checked before any of it is written."""
    for entry in entries:
        check_vector(entry.vector, dimension, f"vector of {entry.ref_id[:80]!r}")


def latest_rows(
    collection: str, team_id: str | None, tenant: str | None, entries: Iterable[VectorEntry]
) -> dict[str, VectorEntry]:
    """``row id -> entry`` for a batch, in first-seen order; the last duplicate wins."""
    row_id = row_id_factory(collection, team_id, tenant)
    return {row_id(entry.ref_id): entry for entry in entries}


def row_fields(entry: VectorEntry, team: str, tenant: str | None = None) -> dict[str, Any]:
    """The fields a cluster row stores: optional ones (and the tenant) only when set."""
    fields: dict[str, Any] = {
        "ref_type": entry.ref_type,
        "ref_id": entry.ref_id,
        "text": entry.text,
        "team_id": team,
    }
    if tenant is not None:
        fields["tenant"] = tenant
    for key in _OPTIONAL_FIELDS:
        value = getattr(entry, key)
        if value is not None:
            fields[key] = value
    return fields


def typed_values(key: str, values: Iterable[Scalar]) -> list[Any]:
    """The filter values that can equal a stored ``key`` (text fields: str; ordinal: int).

    A value of another type can never match, so it is dropped here rather than coerced:
    ``ordinal="3"`` matches no row, as it would not on the in-memory backend.
    """
    if key in STRING_FIELDS:
        return [v for v in values if isinstance(v, str)]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


def hit_from(fields: Mapping[str, Any], score: float) -> SearchHit:
    """A :class:`SearchHit` from a stored row's fields (team and tenant left out)."""
    return SearchHit(
        ref_type=str(fields.get("ref_type", "")),
        ref_id=str(fields.get("ref_id", "")),
        text=str(fields.get("text", "")),
        score=score,
        scope=fields.get("scope"),
        path=fields.get("path"),
        ordinal=fields.get("ordinal"),
    )


def ranked_hits(
    candidates: Iterable[tuple[Mapping[str, Any] | None, float]], threshold: float | None
) -> list[SearchHit]:
    """Engine answers as hits: clamped scores, the threshold applied, best first.

    The sort is stable, so equal scores (compared to 1e-9, past float noise) keep the
    engine's order.
    """
    hits = []
    for fields, raw in candidates:
        score = clamp_score(float(raw))
        if threshold is not None and score < threshold:
            continue
        hits.append(hit_from(fields or {}, score))
    hits.sort(key=lambda h: -round(h.score, 9))
    return hits
