"""Registers the ``hashing`` and ``minilm`` embedders (hook ``akgentic_embedders``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from akgentic.plugin_api import EmbedderSpec, hookimpl


def _hashing(model: str, dimension: int, timeout_s: float) -> Any:
    from akgentic_embed_local.hashing import HashingEmbedder

    return HashingEmbedder(model, dimension, timeout_s)


def _minilm(model: str, dimension: int, timeout_s: float) -> Any:
    from akgentic_embed_local.minilm import MiniLMEmbedder

    return MiniLMEmbedder(model, dimension, timeout_s)


def _minilm_unavailable() -> str | None:
    from akgentic_embed_local.minilm import minilm_unavailable

    return minilm_unavailable()


@hookimpl
def akgentic_embedders() -> Iterable[EmbedderSpec]:
    """``hashing`` (stdlib, any width) and ``minilm`` (needs the ``minilm`` extra)."""
    return [
        EmbedderSpec(
            name="hashing",
            factory=_hashing,
            dimensions=256,
            default_model="hashing",
            max_batch=1024,
            max_input_chars=8000,
            description="Feature hashing of words and word pairs: lexical, offline, deterministic",
            distribution="akgentic-embed-local",
        ),
        EmbedderSpec(
            name="minilm",
            factory=_minilm,
            dimensions=384,
            models={"all-MiniLM-L6-v2": 384},
            default_model="all-MiniLM-L6-v2",
            max_batch=64,
            max_input_chars=2000,
            available=_minilm_unavailable,
            description="all-MiniLM-L6-v2 sentence embeddings on CPU (offline)",
            distribution="akgentic-embed-local[minilm]",
        ),
    ]
