"""``OpenAIEmbedder``: the embeddings API of OpenAI, Azure OpenAI or any compatible server.

The SDK reads its usual variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``; for Azure
``AZURE_OPENAI_API_KEY``, ``AZURE_OPENAI_ENDPOINT``, ``OPENAI_API_VERSION``), so a
local Ollama, vLLM or llama.cpp server is one ``OPENAI_BASE_URL`` away. The client
is built on the first call, not when the embedder is. Inputs are sent in batches
of at most 256, each cut to 4,000 characters; ``dimensions=`` is never sent (the
width is the model's), and a response of another width is an ``EmbeddingError``.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from akgentic.plugin_api import EmbeddingError, clean_text

__all__ = ["MAX_BATCH", "MAX_INPUT_CHARS", "MODELS", "OpenAIEmbedder", "unavailable"]

MODELS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
MAX_BATCH = 256
MAX_INPUT_CHARS = 4000


def _set(name: str) -> bool:
    return bool(os.environ.get(name, "").strip())


def unavailable(provider: str) -> str | None:
    """None when ``provider`` has its credentials here, else which are missing."""
    if provider == "azure":
        missing = [v for v in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT") if not _set(v)]
        return f"{' and '.join(missing)} not set" if missing else None
    if not _set("OPENAI_API_KEY"):
        return "OPENAI_API_KEY is not set"
    return None


class OpenAIEmbedder:
    """Embeds through ``client.embeddings.create``; ``provider`` is ``openai`` or ``azure``."""

    def __init__(
        self,
        model: str,
        dimension: int,
        timeout_s: float = 20.0,
        provider: str = "openai",
        client: Any = None,
    ) -> None:
        self.name = provider
        self.model = model
        self.dimension = dimension
        self.timeout_s = timeout_s
        self._client = client
        self._lock = threading.Lock()

    def _api(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                factory = openai.AzureOpenAI if self.name == "azure" else openai.OpenAI
                self._client = factory(timeout=self.timeout_s, max_retries=2)
            return self._client

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order; ``[]`` makes no request."""
        if not texts:
            return []
        cleaned = [clean_text(t, MAX_INPUT_CHARS) or " " for t in texts]
        vectors: list[list[float]] = []
        for start in range(0, len(cleaned), MAX_BATCH):
            vectors.extend(self._batch(cleaned[start : start + MAX_BATCH]))
        return vectors

    def _batch(self, texts: list[str]) -> list[list[float]]:
        try:
            response = self._api().embeddings.create(model=self.model, input=texts)
        except Exception as exc:
            raise EmbeddingError(f"{self.name} embeddings request failed: {exc}") from exc
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(texts):
            raise EmbeddingError(
                f"{self.name} returned {len(data)} embeddings for {len(texts)} inputs"
            )
        vectors = [list(item.embedding) for item in data]
        for vector in vectors:
            if len(vector) != self.dimension:
                raise EmbeddingError(
                    f"{self.model!r} returned {len(vector)}-dimensional vectors, "
                    f"the store expects {self.dimension}"
                )
        return vectors
