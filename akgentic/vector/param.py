"""``VectorStoreParam``, its resolution and the checks a consumer runs when it is bound.

A consumer card declares ``vector_store: VectorStoreParam | bool = True`` and keeps it
as written; :func:`resolve_store_param` expands it at the point of use only, so a
catalog built on one machine does not freeze that machine's backend. The checks of
:func:`bind_store` run when the team is created (or the agent hired), before any
store actor exists; a declined store (``False``) skips all of them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from akgentic.vector.registry import (
    DISTRIBUTIONS,
    available_embedders,
    default_backend,
    embedder_unavailable,
    find_embedder_spec,
    get_backend_spec,
    needs_store_actor,
)

if TYPE_CHECKING:
    from akgentic.plugins.specs import EmbedderSpec, VectorBackendSpec

__all__ = [
    "DEFAULT_DIMENSION",
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_EMBEDDING_PROVIDER",
    "StoreBinding",
    "VectorStoreParam",
    "bind_store",
    "resolve_store_param",
]

logger = logging.getLogger(__name__)

DEFAULT_DIMENSION = 1536
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
DEFAULT_EMBEDDING_PROVIDER = "openai"


class VectorStoreParam(BaseModel):
    """Where a consumer keeps its vectors and how it embeds them.

    ``backend`` defaults to :func:`~akgentic.vector.registry.default_backend`, read
    from the environment each time a param is built. ``backend_declared`` (and
    ``embedding_declared``) record whether the author wrote the field; they are fixed
    at first construction and survive dump/validate, unlike ``model_fields_set``.
    Connection settings are never fields: they come from the environment.
    """

    model_config = ConfigDict(extra="forbid")

    backend: str = Field(default_factory=default_backend)
    backend_declared: bool = False
    root: str | None = None
    dimension: int = Field(default=DEFAULT_DIMENSION, ge=1)
    tenant: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    embedding_provider: str = DEFAULT_EMBEDDING_PROVIDER
    embedding_declared: bool = False

    @model_validator(mode="before")
    @classmethod
    def _remember_declared(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("backend_declared", "backend" in data)
            data.setdefault("embedding_declared", "embedding_provider" in data)
        return data


def resolve_store_param(value: VectorStoreParam | bool | None) -> VectorStoreParam | None:
    """``True`` -> a default param, ``False``/None -> declined, a param -> itself."""
    if value is None or value is False:
        return None
    if value is True:
        return VectorStoreParam()
    return value


@dataclass(frozen=True)
class StoreBinding:
    """The outcome of binding a store param: what to build, and what is missing.

    ``unavailable`` is None when the embedder can run, else the reason; the consumer
    then runs keyword-only, without a store (and without a ``#VectorStore``).
    """

    param: VectorStoreParam
    backend: VectorBackendSpec
    embedder: EmbedderSpec | None
    unavailable: str | None
    needs_actor: bool


def bind_store(owner: str, value: VectorStoreParam | bool | None) -> StoreBinding | None:
    """Run the bind-time checks for ``owner``'s store; None for a declined store.

    Raises ValueError for an unknown backend (listing the installed ones and the
    distribution to install), a backend the environment does not provision, a
    dimension that the model cannot produce, and an embedder that was named but is
    not installed. A defaulted embedder that is missing, or one that cannot run here
    (no key), logs one WARNING and the binding says why.
    """
    param = resolve_store_param(value)
    if param is None:
        return None
    spec = get_backend_spec(param.backend)
    if spec.require_configured is not None:
        spec.require_configured(owner)
    reason: str | None
    embedder_spec = find_embedder_spec(param.embedding_provider)
    if embedder_spec is None:
        if param.embedding_declared:
            installed = ", ".join(available_embedders()) or "none"
            hint = DISTRIBUTIONS["embedders"].get(param.embedding_provider)
            raise ValueError(
                f"{owner} names embedding_provider={param.embedding_provider!r}, which is not "
                f"installed; installed embedders: {installed}"
                + (f". Install it with: pip install '{hint}'" if hint else "")
            )
        reason = f"embedder {param.embedding_provider!r} is not installed"
    else:
        width = embedder_spec.models.get(param.embedding_model)
        if width is not None and width != param.dimension:
            raise ValueError(
                f"{owner} declares dimension={param.dimension} for embedding_model="
                f"'{param.embedding_model}', which produces {width}-dimensional vectors. "
                f"Set dimension={width} or pick another model."
            )
        reason = embedder_unavailable(embedder_spec)
    if reason is not None:
        logger.warning(
            "%s: semantic search is unavailable (%s); it runs keyword-only", owner, reason
        )
    return StoreBinding(
        param=param,
        backend=spec,
        embedder=embedder_spec,
        unavailable=reason,
        needs_actor=reason is None and needs_store_actor(param),
    )
