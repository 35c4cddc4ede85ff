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

from akgentic.plugin_api import (
    IMPOSSIBLE,
    SearchResult,
    VectorEntry,
    VectorQuery,
    check_entries,
    check_remove,
    check_search,
    check_team_delete,
    check_vector,
    is_shared,
    latest_rows,
    ranked_hits,
    row_fields,
    writer_team,
)
from akgentic_qdrant.filters import build_filter

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from akgentic.plugin_api import VectorStoreParam

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
        check_entries(entries, self._dimension(collection))
        if not entries:
            return
        team = writer_team(collection, self.team_id)
        points = [
            models.PointStruct(
                id=point_id,
                vector=[float(v) for v in entry.vector],
                payload=row_fields(entry, team, self.tenant),
            )
            for point_id, entry in latest_rows(
                collection, self.team_id, self.tenant, entries
            ).items()
        ]
        with self._lock:
            self.client.upsert(collection, points=points, wait=True)

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids of this team that match ``scope`` and ``path_prefix``."""
        check_remove(collection, self.team_id, scope, path_prefix)
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
        args = check_search(collection, self.team_id, top_k, scope, path_prefix, query)
        check_vector(query_vector, self._dimension(collection), "query vector")
        condition = build_filter(
            models,
            collection,
            self.team_id,
            self.tenant,
            scope=scope,
            path_prefix=path_prefix,
            filters=args.filters,
        )
        if condition is IMPOSSIBLE:
            return SearchResult()
        with self._lock:
            response = self.client.query_points(
                collection,
                query=[float(v) for v in query_vector],
                query_filter=condition,
                limit=top_k,
                with_payload=True,
                score_threshold=args.threshold,
                **args.params,
            )
        return SearchResult(
            hits=ranked_hits(((p.payload, p.score) for p in response.points), args.threshold)
        )

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
        check_team_delete(collection)
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
