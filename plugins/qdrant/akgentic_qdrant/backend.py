"""``QdrantBackend``: one team's view of a Qdrant server or local engine.

The backend takes a client (from :func:`akgentic.vector.get_client`) and never opens
or closes one. Points are keyed by :func:`~akgentic.vector.row_object_id`, so a
re-added row replaces its point; every point carries ``team_id`` (``""`` when the
writer has none) and every read or remove on a team-scoped collection ANDs in the
backend's own team. Local clients are not thread-safe, so every call runs under
the lock given with the client (a no-op lock for servers).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from qdrant_client import models

from akgentic.vector.protocol import (
    SearchHit,
    SearchResult,
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
from akgentic_qdrant.filters import IMPOSSIBLE, build_filter, payload_of

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from akgentic.vector.param import VectorStoreParam

__all__ = ["QdrantBackend"]

_SCROLL = 256


class QdrantBackend:
    """The ``qdrant`` backend over ``client``, owned by ``team_id`` (None: admin)."""

    def __init__(
        self,
        client: QdrantClient,
        team_id: str | None,
        tenant: str | None = None,
        lock: Any = None,
    ) -> None:
        self.client = client
        self.team_id = team_id or None
        self.tenant = tenant
        self._lock: Any = lock if lock is not None else contextlib.nullcontext()
        self._dimensions: dict[str, int] = {}

    # ------------------------------------------------------------ collections

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create ``name`` (cosine, one vector); refuse other distances and widths."""
        distance = str(config.params.get("distance", "Cosine"))
        if distance.casefold() != "cosine":
            raise ValueError(
                f"collection {name!r}: distance {distance!r} is not supported; "
                "scores are cosine similarities"
            )
        with self._lock:
            if self.client.collection_exists(name):
                params = self.client.get_collection(name).config.params.vectors
                if not isinstance(params, models.VectorParams):
                    raise ValueError(f"collection {name!r} exists without a single vector")
                if params.distance != models.Distance.COSINE:
                    raise ValueError(f"collection {name!r} exists with {params.distance} distance")
                if params.size != config.dimension:
                    raise ValueError(
                        f"collection {name!r} exists with dimension {params.size}, "
                        f"not {config.dimension}"
                    )
            else:
                self.client.create_collection(
                    name,
                    vectors_config=models.VectorParams(
                        size=config.dimension, distance=models.Distance.COSINE
                    ),
                )
        self._dimensions[name] = config.dimension

    def _dimension(self, name: str) -> int:
        dimension = self._dimensions.get(name)
        if dimension is None:
            raise ValueError(f"collection {name!r} was never created by this backend")
        return dimension

    # ------------------------------------------------------------------ writes

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert points; every vector is checked before anything is sent."""
        dimension = self._dimension(collection)
        for entry in entries:
            check_vector(entry.vector, dimension, f"vector of {entry.ref_id[:80]!r}")
        if not entries:
            return
        team = "" if is_shared(collection) else (self.team_id or "")
        points: dict[str, models.PointStruct] = {}
        row_id = row_id_factory(collection, self.team_id, self.tenant)
        for entry in entries:  # the last duplicate of a batch wins
            point_id = row_id(entry.ref_id)
            points[point_id] = models.PointStruct(
                id=point_id,
                vector=[float(v) for v in entry.vector],
                payload=payload_of(entry, team, self.tenant),
            )
        with self._lock:
            self.client.upsert(collection, points=list(points.values()), wait=True)

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids of this team that match ``scope`` and ``path_prefix``."""
        check_path_prefix(path_prefix)
        require_scope(collection, scope)
        require_team(collection, self.team_id)
        self._dimension(collection)
        if not ref_ids:
            return
        selector = build_filter(
            models,
            collection,
            self.team_id,
            self.tenant,
            scope=scope,
            path_prefix=path_prefix,
            ref_ids=list(ref_ids),
        )
        with self._lock:
            self.client.delete(
                collection, points_selector=models.FilterSelector(filter=selector), wait=True
            )

    # ------------------------------------------------------------------- reads

    def search(
        self,
        collection: str,
        query_vector: list[float],
        top_k: int,
        scope: str | None = None,
        path_prefix: str | None = None,
        query: VectorQuery | None = None,
    ) -> SearchResult:
        """Cosine top-``top_k``; every predicate is a server-side filter."""
        check_top_k(top_k)
        check_path_prefix(path_prefix)
        filters = check_filters(query)
        require_scope(collection, scope)
        require_team(collection, self.team_id)
        check_vector(query_vector, self._dimension(collection), "query vector")
        condition = build_filter(
            models,
            collection,
            self.team_id,
            self.tenant,
            scope=scope,
            path_prefix=path_prefix,
            filters=filters,
        )
        if condition is IMPOSSIBLE:
            return SearchResult()
        params = dict(query.params) if query is not None else {}
        threshold = query.score_threshold if query is not None else None
        with self._lock:
            response = self.client.query_points(
                collection,
                query=[float(v) for v in query_vector],
                query_filter=condition,
                limit=top_k,
                with_payload=True,
                score_threshold=threshold,
                **params,
            )
        hits = []
        for point in response.points:
            payload = point.payload or {}
            score = clamp_score(float(point.score))
            if threshold is not None and score < threshold:
                continue
            hits.append(
                SearchHit(
                    ref_type=str(payload.get("ref_type", "")),
                    ref_id=str(payload.get("ref_id", "")),
                    text=str(payload.get("text", "")),
                    score=score,
                    scope=payload.get("scope"),
                    path=payload.get("path"),
                    ordinal=payload.get("ordinal"),
                )
            )
        # Equal scores come back in engine order; keep the sort stable and descending.
        hits.sort(key=lambda h: -round(h.score, 9))
        return SearchResult(hits=hits)

    def count(self, collection: str) -> int:
        """Points of ``collection`` visible to this team (and tenant)."""
        self._dimension(collection)
        condition = build_filter(models, collection, self.team_id, self.tenant)
        if self.team_id is None and not is_shared(collection):
            condition = None  # the admin view counts everything
        with self._lock:
            return int(self.client.count(collection, count_filter=condition, exact=True).count)

    def stored_ids(self, collection: str) -> list[str]:
        """Every point id of ``collection`` (for the contract kit and the CLI)."""
        ids: list[str] = []
        offset: Any = None
        with self._lock:
            while True:
                points, offset = self.client.scroll(
                    collection, limit=_SCROLL, offset=offset, with_payload=False
                )
                ids.extend(str(p.id) for p in points)
                if offset is None:
                    return ids

    def list_collections(self) -> list[str]:
        """Every collection of the cluster (or local engine)."""
        with self._lock:
            return sorted(c.name for c in self.client.get_collections().collections)

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Delete ``team_id``'s points; refuses shared and missing collections."""
        if is_shared(collection):
            raise ValueError(
                f"Collection '{collection}' is shared across teams; its rows are never "
                "deleted by team"
            )
        with self._lock:
            if not self.client.collection_exists(collection):
                raise ValueError(f"collection {collection!r} does not exist")
            condition = build_filter(models, collection, None, None, team_override=team_id)
            doomed = int(self.client.count(collection, count_filter=condition, exact=True).count)
            if doomed:
                self.client.delete(
                    collection, points_selector=models.FilterSelector(filter=condition), wait=True
                )
            return doomed
