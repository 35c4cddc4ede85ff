"""``qdrant-edge``: the embedded, persistent Qdrant engine (qdrant-edge-py), a shard per collection.

Shards live under ``<root>/<collection>/`` and are flushed after every mutation, so a
row that was acknowledged survives the process. One :class:`EdgeStorage` per root
per process holds the open shards (a second process on the same root is refused by
the engine's own lock). Payloads, ids and filters are those of the ``qdrant``
backend; the filter builder is shared, fed with ``qdrant_edge``'s condition classes.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import qdrant_edge as edge

from akgentic.plugin_api import (
    IMPOSSIBLE,
    ClusterKey,
    SearchResult,
    VectorEntry,
    VectorQuery,
    check_entries,
    check_remove,
    check_search,
    check_team_delete,
    check_vector,
    get_client,
    is_shared,
    latest_rows,
    ranked_hits,
    row_fields,
    writer_team,
)
from akgentic_qdrant.filters import build_filter

if TYPE_CHECKING:
    from akgentic.plugin_api import VectorStoreParam

__all__ = ["EdgeBackend", "EdgeStorage", "open_edge_storage"]

_META = "akgentic.json"
_SCROLL = 256
# A collection name becomes a directory name: nothing that could leave the root.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


def _checked_name(name: str) -> str:
    if not _SAFE_NAME.match(name) or ".." in name:
        raise ValueError(
            f"collection name {name[:80]!r} cannot name a qdrant-edge shard directory: "
            "use letters, digits, '_', '.' and '-'"
        )
    return name


class EdgeStorage:
    """The open shards under one root, used under one lock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lock = threading.RLock()
        self.shards: dict[str, tuple[Any, int]] = {}
        root.mkdir(parents=True, exist_ok=True)

    def shard(self, name: str) -> tuple[Any, int] | None:
        """The open shard of ``name`` and its dimension, opening it from disk if it exists."""
        found = self.shards.get(name)
        if found is not None:
            return found
        folder = self.root / _checked_name(name)
        meta = folder / _META
        if not meta.exists():
            return None
        dimension = int(json.loads(meta.read_text())["dimension"])
        found = (edge.EdgeShard.load(str(folder / "shard")), dimension)
        self.shards[name] = found
        return found

    def create(self, name: str, dimension: int) -> tuple[Any, int]:
        """Create the shard of ``name`` (cosine, ``dimension`` wide)."""
        folder = self.root / _checked_name(name)
        folder.mkdir(parents=True, exist_ok=True)
        config = edge.EdgeConfig(
            vectors=edge.EdgeVectorParams(size=dimension, distance=edge.Distance.Cosine)
        )
        shard = edge.EdgeShard.create(str(folder / "shard"), config)
        (folder / _META).write_text(json.dumps({"dimension": dimension}))
        self.shards[name] = (shard, dimension)
        return shard, dimension

    def names(self) -> list[str]:
        """Every collection stored under the root."""
        return sorted(p.parent.name for p in self.root.glob(f"*/{_META}"))

    def close(self) -> None:
        """Flush and close every open shard."""
        with self.lock:
            for shard, _dimension in self.shards.values():
                shard.flush()
                shard.close()
            self.shards.clear()


def open_edge_storage(root: str) -> EdgeStorage:
    """The process's storage for ``root`` (shared by every backend on it)."""
    path = Path(root).expanduser().resolve()
    storage: EdgeStorage = get_client(
        ClusterKey.local("qdrant-edge", str(path)), lambda: EdgeStorage(path), close=_close
    )
    return storage


def _close(storage: EdgeStorage) -> None:
    storage.close()


class EdgeBackend:
    """The ``qdrant-edge`` backend: one team's view of an :class:`EdgeStorage`."""

    def __init__(self, storage: EdgeStorage, team_id: str | None, tenant: str | None = None):
        self.storage = storage
        self.team_id = team_id or None
        self.tenant = tenant
        self._created: set[str] = set()

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create ``name``'s shard if absent; another dimension or distance raises."""
        distance = str(config.params.get("distance", "Cosine"))
        if distance.casefold() != "cosine":
            raise ValueError(f"collection {name!r}: distance {distance!r} is not supported")
        with self.storage.lock:
            found = self.storage.shard(name)
            if found is None:
                self.storage.create(name, config.dimension)
            elif found[1] != config.dimension:
                raise ValueError(
                    f"collection {name!r} exists with dimension {found[1]}, not {config.dimension}"
                )
        self._created.add(name)

    def _shard(self, name: str) -> tuple[Any, int]:
        found = self.storage.shard(name) if name in self._created else None
        if found is None:
            raise ValueError(f"collection {name!r} was never created by this backend")
        return found

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert points and flush; every vector is checked first."""
        with self.storage.lock:
            shard, dimension = self._shard(collection)
            check_entries(entries, dimension)
            if not entries:
                return
            team = writer_team(collection, self.team_id)
            points = [
                edge.Point(point_id, [float(v) for v in e.vector], row_fields(e, team, self.tenant))
                for point_id, e in latest_rows(
                    collection, self.team_id, self.tenant, entries
                ).items()
            ]
            shard.update(edge.UpdateOperation.upsert_points(points))
            shard.flush()

    def remove(
        self,
        collection: str,
        ref_ids: list[str],
        scope: str | None = None,
        path_prefix: str | None = None,
    ) -> None:
        """Delete the listed ids of this team matching ``scope`` and ``path_prefix``."""
        check_remove(collection, self.team_id, scope, path_prefix)
        with self.storage.lock:
            shard, _dimension = self._shard(collection)
            if not ref_ids:
                return
            condition = build_filter(
                edge,
                collection,
                self.team_id,
                self.tenant,
                scope=scope,
                path_prefix=path_prefix,
                ref_ids=list(ref_ids),
            )
            shard.update(edge.UpdateOperation.delete_points_by_filter(condition))
            shard.flush()

    def search(
        self,
        collection: str,
        query_vector: list[float],
        top_k: int,
        scope: str | None = None,
        path_prefix: str | None = None,
        query: VectorQuery | None = None,
    ) -> SearchResult:
        """Cosine top-``top_k`` with every predicate in the engine's filter."""
        args = check_search(collection, self.team_id, top_k, scope, path_prefix, query)
        with self.storage.lock:
            shard, dimension = self._shard(collection)
            check_vector(query_vector, dimension, "query vector")
            condition = build_filter(
                edge,
                collection,
                self.team_id,
                self.tenant,
                scope=scope,
                path_prefix=path_prefix,
                filters=args.filters,
            )
            if condition is IMPOSSIBLE:
                return SearchResult()
            points = shard.query(
                edge.QueryRequest(
                    limit=top_k,
                    query=edge.Query.Nearest([float(v) for v in query_vector]),
                    filter=condition,
                    with_payload=True,
                    score_threshold=args.threshold,
                )
            )
        return SearchResult(
            hits=ranked_hits(((p.payload, p.score) for p in points), args.threshold)
        )

    def count(self, collection: str) -> int:
        """Points visible to this team (and tenant)."""
        with self.storage.lock:
            shard, _dimension = self._shard(collection)
            condition = None
            if self.team_id is not None or is_shared(collection):
                condition = build_filter(edge, collection, self.team_id, self.tenant)
            return int(shard.count(edge.CountRequest(exact=True, filter=condition)))

    def stored_ids(self, collection: str) -> list[str]:
        """Every point id of ``collection``."""
        ids: list[str] = []
        offset: Any = None
        with self.storage.lock:
            shard, _dimension = self._shard(collection)
            while True:
                records, offset = shard.scroll(
                    edge.ScrollRequest(offset=offset, limit=_SCROLL, with_payload=False)
                )
                ids.extend(str(r.id) for r in records)
                if offset is None:
                    return ids

    def list_collections(self) -> list[str]:
        """Every collection under the storage root."""
        with self.storage.lock:
            return self.storage.names()

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Delete ``team_id``'s points; refuses shared and missing collections."""
        check_team_delete(collection)
        with self.storage.lock:
            found = self.storage.shard(collection)
            if found is None:
                raise ValueError(f"collection {collection!r} does not exist")
            shard = found[0]
            condition = build_filter(edge, collection, None, None, team_override=team_id)
            doomed = int(shard.count(edge.CountRequest(exact=True, filter=condition)))
            if doomed:
                shard.update(edge.UpdateOperation.delete_points_by_filter(condition))
                shard.flush()
            return doomed
