"""Registers the ``openai`` and ``azure`` embedders (hook ``akgentic_embedders``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from akgentic.plugin_api import EmbedderSpec, hookimpl


def _factory(provider: str) -> Any:
    def make(model: str, dimension: int, timeout_s: float) -> Any:
        from akgentic_embed_openai.embedder import OpenAIEmbedder

        return OpenAIEmbedder(model, dimension, timeout_s, provider=provider)

    return make


def _available(provider: str) -> Any:
    def probe() -> str | None:
        from akgentic_embed_openai.embedder import unavailable

        return unavailable(provider)

    return probe


@hookimpl
def akgentic_embedders() -> Iterable[EmbedderSpec]:
    """``openai`` (any OpenAI-compatible ``OPENAI_BASE_URL`` too) and ``azure``."""
    from akgentic_embed_openai.embedder import MAX_BATCH, MAX_INPUT_CHARS, MODELS

    return [
        EmbedderSpec(
            name=provider,
            factory=_factory(provider),
            dimensions=1536,
            models=dict(MODELS),
            default_model="text-embedding-3-small",
            max_batch=MAX_BATCH,
            max_input_chars=MAX_INPUT_CHARS,
            available=_available(provider),
            description=description,
            distribution="akgentic-embed-openai",
        )
        for provider, description in (
            ("openai", "OpenAI embeddings, or any OpenAI-compatible server (OPENAI_BASE_URL)"),
            ("azure", "Azure OpenAI embeddings (unknown names are deployments, any width)"),
        )
    ]
