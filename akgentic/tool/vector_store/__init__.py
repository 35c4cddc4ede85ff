"""The seed's import path of the vector store: the same objects as :mod:`akgentic.vector`.

``from akgentic.tool.vector_store import VectorStoreParam, get_client, close_all`` and
``akgentic.tool.vector_store.hybrid`` keep working; new code imports from
:mod:`akgentic.vector`.
"""

from __future__ import annotations

from akgentic.tool.vector_store import hybrid
from akgentic.vector.actor import VectorStoreActor, ensure_store_actor
from akgentic.vector.clients import ClusterKey, close_all, get_client
from akgentic.vector.param import VectorStoreParam, resolve_store_param
from akgentic.vector.protocol import (
    SHARED_COLLECTIONS,
    SearchHit,
    SearchResult,
    VectorBackend,
    VectorEntry,
    VectorQuery,
    row_object_id,
    stable_object_id,
)
from akgentic.vector.registry import BackendContext, default_backend, needs_store_actor

__all__ = [
    "SHARED_COLLECTIONS",
    "BackendContext",
    "ClusterKey",
    "SearchHit",
    "SearchResult",
    "VectorBackend",
    "VectorEntry",
    "VectorQuery",
    "VectorStoreActor",
    "VectorStoreParam",
    "close_all",
    "default_backend",
    "ensure_store_actor",
    "get_client",
    "hybrid",
    "needs_store_actor",
    "resolve_store_param",
    "row_object_id",
    "stable_object_id",
]
