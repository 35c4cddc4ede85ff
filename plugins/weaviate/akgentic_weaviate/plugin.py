"""Registers the ``weaviate`` vector backend (hook ``akgentic_vector_backends``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import VectorBackendSpec, env_value, hookimpl

if TYPE_CHECKING:
    from akgentic.plugin_api import BackendContext


def make_weaviate_backend(context: BackendContext) -> Any:
    """A ``weaviate`` backend on the shared client of the configured cluster."""
    from akgentic_weaviate.backend import WeaviateBackend
    from akgentic_weaviate.connect import connect_from_env

    tenant = context.config.tenant if context.config is not None else None
    return WeaviateBackend(connect_from_env(), context.team_id, tenant)


def _configured() -> bool:
    return env_value("AKGENTIC_WEAVIATE_URL") is not None


def _require(owner: str) -> None:
    if not _configured():
        raise ValueError(
            f"{owner} configures backend='weaviate' but AKGENTIC_WEAVIATE_URL is not set. "
            "Export it (and AKGENTIC_WEAVIATE_API_KEY for an authenticated cluster), or "
            "choose another backend; a Weaviate store is never replaced by a memory one."
        )


@hookimpl
def akgentic_vector_backends() -> Iterable[VectorBackendSpec]:
    """``weaviate`` (default priority 20: the default whenever a cluster is configured)."""
    return [
        VectorBackendSpec(
            name="weaviate",
            factory=make_weaviate_backend,
            default_priority=20,
            is_configured=_configured,
            require_configured=_require,
            description="Weaviate cluster (weaviate-client v4)",
            distribution="akgentic-weaviate",
        )
    ]
