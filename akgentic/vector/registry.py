"""Read-only facade over the registered vector backends and embedders.

Consumers reach backends and embedders only through these functions, never by import:
the plugin that provides a name may or may not be installed, and the errors here say
what is installed and what to ``pip install``.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.plugins.specs import EmbedderSpec, VectorBackendSpec
    from akgentic.vector.embedder import Embedder
    from akgentic.vector.param import VectorStoreParam
    from akgentic.vector.protocol import VectorBackend

__all__ = [
    "DISTRIBUTIONS",
    "BackendContext",
    "available_backends",
    "available_embedders",
    "build_backend",
    "build_embedder",
    "default_backend",
    "embedder_unavailable",
    "env_value",
    "find_embedder_spec",
    "get_backend_spec",
    "get_embedder_spec",
    "needs_store_actor",
]

logger = logging.getLogger(__name__)

FALLBACK_BACKEND = "inmemory"

#: Where the well-known names come from, for "not installed" errors.
DISTRIBUTIONS: dict[str, dict[str, str]] = {
    "vector_backends": {
        "qdrant": "akgentic-qdrant",
        "qdrant-edge": "akgentic-qdrant[edge]",
        "weaviate": "akgentic-weaviate",
    },
    "embedders": {
        "openai": "akgentic-embed-openai",
        "azure": "akgentic-embed-openai",
        "hashing": "akgentic-embed-local",
        "minilm": "akgentic-embed-local[minilm]",
    },
}


def env_value(name: str) -> str | None:
    """An environment variable, with an exported-but-empty value counting as unset."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


class BackendContext:
    """What a backend factory receives: the param, the owning team, a storage root.

    ``team_id`` comes from the owning actor (no card can set it) and is None only for
    an admin sweeper, which may write and reap but not search team-scoped rows.
    """

    __slots__ = ("config", "root", "team_id")

    def __init__(
        self,
        config: VectorStoreParam | None = None,
        team_id: str | None = None,
        root: str | None = None,
    ) -> None:
        self.config = config
        self.team_id = team_id or None
        self.root = root if root is not None else (config.root if config is not None else None)

    def __repr__(self) -> str:
        backend = self.config.backend if self.config is not None else None
        return f"BackendContext(backend={backend!r}, team_id={self.team_id!r}, root={self.root!r})"


def _registry() -> Any:
    from akgentic.plugins import get_registry

    return get_registry()


def available_backends() -> list[str]:
    """Names of the installed vector backends, sorted."""
    return sorted(_registry().vector_backends())


def available_embedders() -> list[str]:
    """Names of the installed embedders, sorted."""
    return sorted(_registry().embedders())


_HOOKS = {"vector_backends": "akgentic_vector_backends", "embedders": "akgentic_embedders"}


def _missing(kind: str, label: str, name: str, installed: list[str]) -> ValueError:
    message = f"No {label} named {name!r} is installed; installed: {', '.join(installed) or 'none'}"
    known = DISTRIBUTIONS.get(kind, {})
    distribution = known.get(name)
    if distribution is not None:
        return ValueError(
            f"{message}. {name!r} is provided by {distribution}: pip install '{distribution}'"
        )
    # A name nobody ships: say which known ones could still be installed, and how a
    # third-party plugin would provide it, so the reader knows what to install.
    others = [f"{n!r} (pip install '{d}')" for n, d in sorted(known.items()) if n not in installed]
    if others:
        message += f". Not installed but available: {', '.join(others)}"
    message += (
        f". Any other name comes from a plugin distribution that registers it through the "
        f"{_HOOKS.get(kind, kind)} hook: pip install that distribution"
    )
    return ValueError(message)


def get_backend_spec(name: str) -> VectorBackendSpec:
    """The record of backend ``name``; ValueError listing the installed ones otherwise."""
    specs = _registry().vector_backends()
    spec = specs.get(name)
    if spec is None:
        raise _missing("vector_backends", "vector backend", name, sorted(specs))
    return spec  # type: ignore[no-any-return]


def get_embedder_spec(name: str) -> EmbedderSpec:
    """The record of embedder ``name``; ValueError listing the installed ones otherwise."""
    specs = _registry().embedders()
    spec = specs.get(name)
    if spec is None:
        raise _missing("embedders", "embedder", name, sorted(specs))
    return spec  # type: ignore[no-any-return]


def find_embedder_spec(name: str) -> EmbedderSpec | None:
    """The record of embedder ``name``, or None when it is not installed."""
    spec: EmbedderSpec | None = _registry().embedders().get(name)
    return spec


def _configured(spec: VectorBackendSpec) -> bool:
    probe = spec.is_configured
    if probe is None:
        return True
    try:
        return bool(probe())
    except Exception:
        logger.warning("is_configured() of vector backend %r raised; skipped", spec.name)
        return False


def default_backend() -> str:
    """The configured backend of highest priority (ties by name), else ``inmemory``.

    Read from the environment each time it is called, never cached.
    """
    try:
        specs = list(_registry().vector_backends().values())
    except Exception:
        logger.warning("vector backends unavailable; defaulting to %s", FALLBACK_BACKEND)
        return FALLBACK_BACKEND
    candidates = [s for s in specs if s.selectable_as_default and s.name != FALLBACK_BACKEND]
    candidates.sort(key=lambda s: (-s.default_priority, s.name))
    for spec in candidates:
        if _configured(spec):
            return str(spec.name)
    return FALLBACK_BACKEND


def needs_store_actor(param: VectorStoreParam | None) -> bool:
    """Whether the store of ``param`` lives in a ``#VectorStore`` actor.

    A card's ``observer()`` and its consumer's ``on_start`` both ask this one function.
    """
    if param is None:
        return False
    spec = get_backend_spec(param.backend)
    return bool(spec.persists_in_actor_state or spec.needs_actor)


def build_backend(
    param: VectorStoreParam, team_id: str | None, root: str | None = None
) -> VectorBackend:
    """A backend instance for ``param`` owned by ``team_id``."""
    spec = get_backend_spec(param.backend)
    backend: VectorBackend = spec.factory(BackendContext(param, team_id=team_id, root=root))
    return backend


def embedder_unavailable(spec: EmbedderSpec) -> str | None:
    """None when the embedder can run here, else the reason (a raising probe is a reason)."""
    probe = spec.available
    if probe is None:
        return None
    try:
        return probe()
    except Exception as exc:
        return f"the availability check of embedder {spec.name!r} failed: {exc}"


def build_embedder(param: VectorStoreParam, timeout_s: float = 20.0) -> Embedder:
    """The embedder named by ``param`` for its model and dimension."""
    spec = get_embedder_spec(param.embedding_provider)
    embedder: Embedder = spec.factory(param.embedding_model, param.dimension, timeout_s)
    return embedder
