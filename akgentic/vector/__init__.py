"""The vector layer: records, the backend protocol, store params, clients, embedders, fusion.

Importing this package loads no vector library (numpy, qdrant-client, weaviate,
openai): names resolve lazily, and backends and embedders are found through the
plugin registry (hooks ``akgentic_vector_backends`` and ``akgentic_embedders``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.vector.actor import (
        STORE_ACTOR_NAME,
        VectorStoreActor,
        VectorStoreChange,
        VectorStoreConfig,
        VectorStoreState,
        ensure_store_actor,
        find_store_actor,
    )
    from akgentic.vector.clients import ClusterKey, close_all, get_client
    from akgentic.vector.embedder import Embedder, EmbeddingError, clean_text, embed_batched
    from akgentic.vector.hybrid import DEFAULT_ALPHA, OVERFETCH, HybridResult, fuse, hybrid_search
    from akgentic.vector.param import (
        StoreBinding,
        VectorStoreParam,
        bind_store,
        resolve_store_param,
    )
    from akgentic.vector.protocol import (
        SHARED_COLLECTIONS,
        CollectionStatus,
        SearchHit,
        SearchResult,
        VectorBackend,
        VectorEntry,
        VectorQuery,
        row_object_id,
        stable_object_id,
    )
    from akgentic.vector.registry import (
        BackendContext,
        available_backends,
        available_embedders,
        build_backend,
        build_embedder,
        default_backend,
        get_backend_spec,
        get_embedder_spec,
        needs_store_actor,
    )

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        [
            "STORE_ACTOR_NAME",
            "VectorStoreActor",
            "VectorStoreChange",
            "VectorStoreConfig",
            "VectorStoreState",
            "ensure_store_actor",
            "find_store_actor",
        ],
        "akgentic.vector.actor",
    ),
    **dict.fromkeys(["ClusterKey", "close_all", "get_client"], "akgentic.vector.clients"),
    **dict.fromkeys(
        ["Embedder", "EmbeddingError", "clean_text", "embed_batched"], "akgentic.vector.embedder"
    ),
    **dict.fromkeys(
        ["DEFAULT_ALPHA", "OVERFETCH", "HybridResult", "fuse", "hybrid_search"],
        "akgentic.vector.hybrid",
    ),
    **dict.fromkeys(
        ["StoreBinding", "VectorStoreParam", "bind_store", "resolve_store_param"],
        "akgentic.vector.param",
    ),
    **dict.fromkeys(
        [
            "SHARED_COLLECTIONS",
            "CollectionStatus",
            "SearchHit",
            "SearchResult",
            "VectorBackend",
            "VectorEntry",
            "VectorQuery",
            "row_object_id",
            "stable_object_id",
        ],
        "akgentic.vector.protocol",
    ),
    **dict.fromkeys(
        [
            "BackendContext",
            "available_backends",
            "available_embedders",
            "build_backend",
            "build_embedder",
            "default_backend",
            "get_backend_spec",
            "get_embedder_spec",
            "needs_store_actor",
        ],
        "akgentic.vector.registry",
    ),
}

__all__ = [
    "DEFAULT_ALPHA",
    "OVERFETCH",
    "SHARED_COLLECTIONS",
    "STORE_ACTOR_NAME",
    "BackendContext",
    "ClusterKey",
    "CollectionStatus",
    "Embedder",
    "EmbeddingError",
    "HybridResult",
    "SearchHit",
    "SearchResult",
    "StoreBinding",
    "VectorBackend",
    "VectorEntry",
    "VectorQuery",
    "VectorStoreActor",
    "VectorStoreChange",
    "VectorStoreConfig",
    "VectorStoreParam",
    "VectorStoreState",
    "available_backends",
    "available_embedders",
    "bind_store",
    "build_backend",
    "build_embedder",
    "clean_text",
    "close_all",
    "default_backend",
    "embed_batched",
    "ensure_store_actor",
    "find_store_actor",
    "fuse",
    "get_backend_spec",
    "get_client",
    "get_embedder_spec",
    "hybrid_search",
    "needs_store_actor",
    "resolve_store_param",
    "row_object_id",
    "stable_object_id",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
