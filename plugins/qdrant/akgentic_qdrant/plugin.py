"""Registers the ``qdrant`` and ``qdrant-edge`` backends (hook ``akgentic_vector_backends``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import VectorBackendSpec, env_value, hookimpl

if TYPE_CHECKING:
    from akgentic.plugin_api import BackendContext


def make_qdrant_backend(context: BackendContext) -> Any:
    """A ``qdrant`` backend on the shared connection ``AKGENTIC_QDRANT_URL`` names."""
    from akgentic_qdrant.backend import QdrantBackend
    from akgentic_qdrant.connect import connect_from_env

    connection = connect_from_env()
    tenant = context.config.tenant if context.config is not None else None
    return QdrantBackend(connection.client, context.team_id, tenant, lock=connection.lock)


def _qdrant_configured() -> bool:
    return env_value("AKGENTIC_QDRANT_URL") is not None


def _require_qdrant(owner: str) -> None:
    if not _qdrant_configured():
        raise ValueError(
            f"{owner} configures backend='qdrant' but AKGENTIC_QDRANT_URL is not set. "
            "Export it (http://host:6333 for a server, :memory: or file:///dir for a local "
            "engine), or choose another backend."
        )


EDGE_VARIABLE = "AKGENTIC_QDRANT_EDGE_PATH"


def _edge_installed() -> bool:
    return importlib.util.find_spec("qdrant_edge") is not None


def make_edge_backend(context: BackendContext) -> Any:
    """A ``qdrant-edge`` backend under ``AKGENTIC_QDRANT_EDGE_PATH`` (else the context root)."""
    from akgentic_qdrant.edge import EdgeBackend, open_edge_storage

    root = env_value(EDGE_VARIABLE) or context.root
    if root is None:
        raise ValueError(f"{EDGE_VARIABLE} is not set")
    tenant = context.config.tenant if context.config is not None else None
    return EdgeBackend(open_edge_storage(root), context.team_id, tenant)


def _edge_configured() -> bool:
    return env_value(EDGE_VARIABLE) is not None and _edge_installed()


def _require_edge(owner: str) -> None:
    if not _edge_installed():
        raise ValueError(
            f"{owner} configures backend='qdrant-edge' but qdrant-edge-py is not installed: "
            "pip install 'akgentic-qdrant[edge]'"
        )
    if env_value(EDGE_VARIABLE) is None:
        raise ValueError(
            f"{owner} configures backend='qdrant-edge' but {EDGE_VARIABLE} is not set. "
            "Export it as the directory the embedded engine keeps its shards in."
        )


@hookimpl
def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:
    """``qdrant`` (default priority 10) and ``qdrant-edge`` (5)."""
    return [
        VectorBackendSpec(
            name="qdrant",
            factory=make_qdrant_backend,
            default_priority=10,
            is_configured=_qdrant_configured,
            require_configured=_require_qdrant,
            description="Qdrant server, or a local :memory: / directory engine",
            distribution="akgentic-qdrant",
        ),
        # Registered even without qdrant-edge-py, so that naming it says what to install
        # instead of "no such backend"; it is never the default unless its path is set.
        VectorBackendSpec(
            name="qdrant-edge",
            factory=make_edge_backend,
            default_priority=5,
            is_configured=_edge_configured,
            require_configured=_require_edge,
            description="Embedded persistent Qdrant engine (qdrant-edge-py) under a directory",
            distribution="akgentic-qdrant[edge]",
        ),
    ]
