"""``WeaviateBackend``: one team's (and tenant's) view of a Weaviate cluster.

Every object is stamped with the owning team (``team_id``, ``""`` on the shared
collection), keyed by :func:`~akgentic.vector.row_object_id` so a re-added row
replaces its object, and written without a vectorizer (vectors come from the
consumer's embedder). A tenant, when given, is Weaviate's native multi-tenancy.
Collection handles are cached per ``(name, tenant)``; batch contexts never leave
:meth:`WeaviateBackend.add`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.query import MetadataQuery
from weaviate.classes.tenants import Tenant

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
    latest_rows,
    ranked_hits,
    row_fields,
    writer_team,
)
from akgentic_weaviate.filters import build_filter, class_name

if TYPE_CHECKING:
    from akgentic.plugin_api import VectorStoreParam

__all__ = ["PROPERTIES", "WeaviateBackend"]

#: The schema of every collection: exact-match text fields, and the chunk ordinal.
PROPERTIES: tuple[tuple[str, Any], ...] = (
    ("ref_type", DataType.TEXT),
    ("ref_id", DataType.TEXT),
    ("text", DataType.TEXT),
    ("team_id", DataType.TEXT),
    ("scope", DataType.TEXT),
    ("path", DataType.TEXT),
    ("ordinal", DataType.INT),
)


class WeaviateBackend:
    """The ``weaviate`` backend over a shared v4 ``client``; ``team_id=None`` is the admin."""

    def __init__(self, client: Any, team_id: str | None, tenant: str | None = None) -> None:
        self.client = client
        self.team_id = team_id or None
        self.tenant = tenant
        self._dimensions: dict[str, int] = {}
        self._handles: dict[tuple[str, str | None], Any] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------ collections

    def create_collection(self, name: str, config: VectorStoreParam) -> None:
        """Create the class if absent (no vectorizer, cosine); add this tenant if any."""
        cls = class_name(name)
        if not self.client.collections.exists(cls):
            self.client.collections.create(
                cls,
                properties=[
                    Property(
                        name=prop,
                        data_type=kind,
                        tokenization=Tokenization.FIELD if kind == DataType.TEXT else None,
                    )
                    for prop, kind in PROPERTIES
                ],
                vectorizer_config=Configure.Vectorizer.none(),
                vector_index_config=Configure.VectorIndex.hnsw(
                    distance_metric=VectorDistances.COSINE
                ),
                multi_tenancy_config=(
                    Configure.multi_tenancy(enabled=True) if self.tenant is not None else None
                ),
            )
        if self.tenant is not None:
            collection = self.client.collections.get(cls)
            existing = collection.tenants.get()
            if self.tenant not in existing:  # creating a tenant twice is an error there
                collection.tenants.create([Tenant(name=self.tenant)])
        known = self._dimensions.get(name)
        if known is not None and known != config.dimension:
            raise ValueError(
                f"collection {name!r} exists with dimension {known}, not {config.dimension}"
            )
        self._dimensions[name] = config.dimension

    def _dimension(self, name: str) -> int:
        dimension = self._dimensions.get(name)
        if dimension is None:
            raise ValueError(f"collection {name!r} was never created by this backend")
        return dimension

    def _handle(self, name: str) -> Any:
        key = (name, self.tenant)
        with self._lock:
            handle = self._handles.get(key)
            if handle is None:
                handle = self.client.collections.get(class_name(name))
                if self.tenant is not None:
                    handle = handle.with_tenant(self.tenant)
                self._handles[key] = handle
            return handle

    # ------------------------------------------------------------------ writes

    def add(self, collection: str, entries: list[VectorEntry]) -> None:
        """Upsert objects; every vector is checked before the batch is opened."""
        check_entries(entries, self._dimension(collection))
        if not entries:
            return
        team = writer_team(collection, self.team_id)
        objects = latest_rows(collection, self.team_id, self.tenant, entries)
        handle = self._handle(collection)
        with handle.batch.dynamic() as batch:
            for uuid, entry in objects.items():
                batch.add_object(
                    # The tenant is Weaviate's own (the handle's), not a property.
                    properties=row_fields(entry, team),
                    uuid=uuid,
                    vector=[float(v) for v in entry.vector],
                )
        failed = list(handle.batch.failed_objects or [])
        if failed:
            raise RuntimeError(f"{len(failed)} objects were not written: {failed[0]}")

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
        where = build_filter(
            collection, self.team_id, scope=scope, path_prefix=path_prefix, ref_ids=list(ref_ids)
        )
        self._handle(collection).data.delete_many(where=where)

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
        """Nearest objects; all predicates go in ``filters=`` before ``limit``."""
        args = check_search(collection, self.team_id, top_k, scope, path_prefix, query)
        check_vector(query_vector, self._dimension(collection), "query vector")
        where = build_filter(
            collection, self.team_id, scope=scope, path_prefix=path_prefix, filters=args.filters
        )
        if where is IMPOSSIBLE:
            return SearchResult()
        response = self._handle(collection).query.near_vector(
            near_vector=[float(v) for v in query_vector],
            limit=top_k,
            filters=where,
            return_metadata=MetadataQuery(distance=True),
        )
        return SearchResult(
            hits=ranked_hits(
                ((o.properties, _similarity(o)) for o in response.objects), args.threshold
            )
        )

    def count(self, collection: str) -> int:
        """Objects of ``collection`` visible to this team (in this tenant)."""
        self._dimension(collection)
        where = None if self.team_id is None else build_filter(collection, self.team_id)
        result = self._handle(collection).aggregate.over_all(total_count=True, filters=where)
        return int(result.total_count or 0)

    def stored_ids(self, collection: str) -> list[str]:
        """Every object uuid of ``collection`` in this tenant (for the contract kit)."""
        return [str(obj.uuid) for obj in self._handle(collection).iterator()]

    def list_collections(self) -> list[str]:
        """Every class of the cluster, as Weaviate names them (capitalised)."""
        return sorted(self.client.collections.list_all(simple=True))

    def delete_by_team(self, collection: str, team_id: str) -> int:
        """Delete ``team_id``'s objects in every tenant; refuses shared and missing classes."""
        check_team_delete(collection)
        cls = class_name(collection)
        if not self.client.collections.exists(cls):
            raise ValueError(f"collection {collection!r} does not exist")
        base = self.client.collections.get(cls)
        tenants = list(base.tenants.get()) if _multi_tenant(base) else [None]
        where = build_filter(collection, None, team_override=team_id)
        removed = 0
        for tenant in tenants:
            handle = base if tenant is None else base.with_tenant(tenant)
            result = handle.data.delete_many(where=where)
            removed += int(getattr(result, "successful", 0) or 0)
        return removed


def _similarity(obj: Any) -> float:
    """Cosine similarity from Weaviate's cosine distance (0 when none came back)."""
    distance = obj.metadata.distance if obj.metadata is not None else None
    return 0.0 if distance is None else 1.0 - float(distance)


def _multi_tenant(collection: Any) -> bool:
    config = collection.config.get()
    mt = getattr(config, "multi_tenancy_config", None)
    return bool(getattr(mt, "enabled", False))
