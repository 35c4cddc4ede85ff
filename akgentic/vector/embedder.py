"""The embedder contract and the text hygiene every consumer applies before embedding.

The store embeds nothing: each consumer embeds with its own param, one call per
mutation batch, split into chunks of the embedder's ``max_batch``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Embedder", "EmbeddingError", "clean_text", "embed_batched"]


class EmbeddingError(RuntimeError):
    """An embedder failed or answered with the wrong number of vectors."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors: one per input, in order, each ``dimension`` wide."""

    name: str
    model: str
    dimension: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed ``texts``; ``embed([])`` returns ``[]`` without any call."""
        ...


def clean_text(text: str, max_chars: int) -> str:
    """``text`` as valid UTF-8 (lone surrogates become U+FFFD), cut to ``max_chars``."""
    cleaned = text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text
    return cleaned[:max_chars] if max_chars > 0 else cleaned


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def embed_batched(embedder: Embedder, texts: Sequence[str], max_batch: int) -> list[list[float]]:
    """Embed ``texts`` in chunks of ``max_batch``; a count mismatch raises EmbeddingError."""
    vectors: list[list[float]] = []
    size = max(1, max_batch)
    for start in range(0, len(texts), size):
        chunk = list(texts[start : start + size])
        out = embedder.embed(chunk)
        if len(out) != len(chunk):
            raise EmbeddingError(
                f"embedder {embedder.name!r} returned {len(out)} vectors for {len(chunk)} texts"
            )
        vectors.extend(out)
    return vectors
