"""Registers the ``qdrant`` vector backend (hook ``akgentic_vector_backends``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from akgentic.plugins import VectorBackendSpec, hookimpl
from akgentic.vector.registry import env_value

if TYPE_CHECKING:
    from akgentic.vector.registry import BackendContext


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


@hookimpl
def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:
    """``qdrant`` (default priority 10)."""
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
    ]
