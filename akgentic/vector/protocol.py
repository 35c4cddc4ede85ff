"""Records, the backend protocol, row identity and the argument checks every backend shares.

Nothing here imports a vector library: these are the rules, the backends apply them.
A backend validates its inputs with the ``check_*`` helpers so that every backend
refuses the same things with the same words.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from json.encoder import encode_basestring_ascii as _ascii_json
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from akgentic.vector.param import VectorStoreParam

__all__ = [
    "FILTER_KEYS",
    "OBJECT_ID_NAMESPACE",
    "SHARED_COLLECTIONS",
    "CollectionStatus",
    "Scalar",
    "SearchHit",
    "SearchResult",
    "VectorBackend",
    "VectorEntry",
    "VectorQuery",
    "check_filters",
    "check_path_prefix",
    "check_top_k",
    "check_vector",
    "clamp_score",
    "is_shared",
    "object_id_factory",
    "require_scope",
    "require_team",
    "row_id_factory",
    "row_object_id",
    "stable_object_id",
]

Scalar = str | int | float | bool

#: Namespace of every row id. Persisted in clusters: it must never change.
OBJECT_ID_NAMESPACE = uuid.UUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")

#: Collections whose rows are shared by every team (bounded by a scope instead).
#: Fixed in code on purpose: neither a param field nor a runtime registry.
SHARED_COLLECTIONS: frozenset[str] = frozenset({"workspace_chunks"})

#: The only row fields a query may filter on.
FILTER_KEYS: frozenset[str] = frozenset({"ref_type", "ref_id", "text", "scope", "path", "ordinal"})


class CollectionStatus(StrEnum):
    """Status of a collection as the store reports it."""

    READY = "ready"
    ERROR = "error"


class VectorEntry(BaseModel):
    """One row: what it refers to, its text and its vector."""

    model_config = ConfigDict(extra="forbid")

    ref_type: str
    ref_id: str
    text: str
    vector: list[float]
    scope: str | None = None
    path: str | None = None
    ordinal: int | None = None


class SearchHit(BaseModel):
    """One search answer; the team and tenant of the row are never exposed."""

    ref_type: str
    ref_id: str
    text: str
    score: float
    scope: str | None = None
    path: str | None = None
    ordinal: int | None = None


class SearchResult(BaseModel):
    """Hits, best first, and the collection's status."""

    hits: list[SearchHit] = Field(default_factory=list)
    status: CollectionStatus = CollectionStatus.READY


class VectorQuery(BaseModel):
    """Optional narrowing of a search: field filters, a score floor, backend knobs."""

    model_config = ConfigDict(extra="forbid")

    filters: dict[str, Scalar | list[Scalar]] | None = None
    score_threshold: float | None = None
    params: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class VectorBackend(Protocol):
    """What the ``#VectorStore`` proxy and every backend expose.

    All searches are cosine similarity with scores clamped to [0, 1]; every
    predicate applies before the ``top_k`` cut; ``add`` upserts by row id.
    """

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create ``name`` if absent; another dimension on an existing one raises ValueError."""
        ...

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert rows (the last duplicate of a batch wins)."""
        ...

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids that match every predicate; unknown ids are ignored."""
        ...

    def search(
        self,
        collection: str,
        query_vector: list[float],
        top_k: int,
        scope: str | None = None,
        path_prefix: str | None = None,
        query: VectorQuery | None = None,
    ) -> SearchResult:
        """The ``top_k`` most similar visible rows."""
        ...

    def count(self, collection: str) -> int:
        """Rows of ``collection`` visible to this backend (team and tenant scoped)."""
        ...

    def list_collections(self) -> list[str]:
        """Collections that exist in the storage (not only those this instance made)."""
        ...

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Admin: delete every row of ``team_id`` in ``collection``; returns the count."""
        ...


# ------------------------------------------------------------------ row identity


def stable_object_id(team_id: str | None, tenant: str | None, ref_id: str) -> str:
    """The persisted id of a row: uuid5 of ``[team, tenant, ref_id]`` as compact JSON.

    Equal to ``uuid.uuid5(OBJECT_ID_NAMESPACE, json.dumps([team or "", tenant or "",
    ref_id], ensure_ascii=True, separators=(",", ":")))``, computed without building
    a JSON encoder and a UUID object per row (ids are derived for every upserted row).
    """
    return object_id_factory(team_id, tenant)(ref_id)


def object_id_factory(team_id: str | None, tenant: str | None) -> Callable[[str], str]:
    """``ref_id -> stable_object_id(team_id, tenant, ref_id)``, the common prefix hashed once."""
    prefix = f"[{_ascii_json(team_id or '')},{_ascii_json(tenant or '')},"
    base = hashlib.sha1(OBJECT_ID_NAMESPACE.bytes + prefix.encode("ascii"), usedforsecurity=False)

    def object_id(ref_id: str) -> str:
        digest = base.copy()
        digest.update(_ascii_json(ref_id).encode("ascii") + b"]")
        raw = bytearray(digest.digest()[:16])
        raw[6] = (raw[6] & 0x0F) | 0x50  # version 5
        raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
        h = raw.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    return object_id


def is_shared(collection: str) -> bool:
    """Whether ``collection`` is shared across teams (case-insensitive, as Weaviate renames)."""
    return collection.casefold() in _SHARED_FOLDED


_SHARED_FOLDED = frozenset(name.casefold() for name in SHARED_COLLECTIONS)


def row_object_id(collection: str, team_id: str | None, tenant: str | None, ref_id: str) -> str:
    """The id of a row in ``collection``; shared collections drop the team."""
    return stable_object_id(None if is_shared(collection) else team_id, tenant, ref_id)


def row_id_factory(
    collection: str, team_id: str | None, tenant: str | None
) -> Callable[[str], str]:
    """``ref_id -> row_object_id(collection, team_id, tenant, ref_id)``, for whole batches."""
    return object_id_factory(None if is_shared(collection) else team_id, tenant)


# ------------------------------------------------------------------ argument checks


def check_path_prefix(path_prefix: str | None) -> None:
    """Refuse wildcard characters, which one backend's pattern match would honour."""
    if path_prefix is not None and ("*" in path_prefix or "?" in path_prefix):
        raise ValueError(
            f"path_prefix {path_prefix[:80]!r} contains '*' or '?': prefixes are matched "
            "literally and wildcards are not supported"
        )


def require_scope(collection: str, scope: str | None) -> None:
    """Shared collections have no team boundary: searches and removes must name a scope."""
    if is_shared(collection) and not scope:
        raise ValueError(
            f"Collection '{collection}' is shared across teams, so a scope is the only "
            "boundary it has. Pass scope= to search or remove in it."
        )


def require_team(collection: str, team_id: str | None) -> None:
    """Team-scoped reads and removes need the backend's own team."""
    if not is_shared(collection) and not team_id:
        raise ValueError(
            f"Collection '{collection}' is scoped to a team, but this backend has no team id; "
            "only the owning team's backend can search or remove its rows"
        )


def check_top_k(top_k: int) -> None:
    """``top_k`` must be a positive integer."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive integer, got {top_k!r}")


def check_vector(vector: Sequence[float], dimension: int, what: str = "vector") -> None:
    """Refuse empty, wrong-width, zero and non-finite vectors (cosine needs a direction)."""
    if len(vector) == 0:
        raise ValueError(f"{what} is empty")
    if len(vector) != dimension:
        raise ValueError(f"{what} has {len(vector)} dimensions, the collection has {dimension}")
    total = 0.0
    for value in vector:
        if not math.isfinite(value):
            raise ValueError(f"{what} holds a non-finite value ({value!r})")
        total += value * value
    if total == 0.0:
        raise ValueError(f"{what} is all zeros and has no direction")


def check_filters(query: VectorQuery | None) -> dict[str, list[Scalar]]:
    """The query's filters as ``key -> accepted values``; unknown keys raise ValueError.

    A list value means "any of"; a scalar is a one-element list. Values are compared
    literally by every backend (built with typed filter objects, never from strings).
    """
    if query is None or not query.filters:
        return {}
    result: dict[str, list[Scalar]] = {}
    for key, value in query.filters.items():
        if key not in FILTER_KEYS:
            raise ValueError(
                f"cannot filter on {key[:80]!r}: filter keys are {', '.join(sorted(FILTER_KEYS))}"
            )
        values = list(value) if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str | int | float | bool):
                raise ValueError(f"filter {key!r} holds {type(item).__name__}; use scalars")
        result[key] = values
    return result


def matches_filters(row: Mapping[str, Any], filters: Mapping[str, list[Scalar]]) -> bool:
    """Whether ``row`` (a record's field mapping) satisfies every filter (AND of any-ofs)."""
    return all(row.get(key) in values for key, values in filters.items())


def clamp_score(score: float) -> float:
    """Scores are reported in [0, 1] by every backend."""
    if score != score:  # NaN
        return 0.0
    return 0.0 if score < 0.0 else 1.0 if score > 1.0 else score
