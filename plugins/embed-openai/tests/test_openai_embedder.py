"""The ``openai`` embedder against the project's own loopback ``/v1/embeddings`` server.

The real openai SDK talks HTTP to :class:`akgentic.testing.EmbeddingsServer` on
127.0.0.1; the real OpenAI API is never called.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest
from akgentic_embed_openai.embedder import OpenAIEmbedder

from akgentic.testing import EmbedderContract, EmbeddingsServer
from akgentic.vector import EmbeddingError
from akgentic.vector.registry import get_embedder_spec


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer(dimension=1536, api_key="sk-test") as running:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", running.base_url)
        yield running


class TestOpenAIEmbedder(EmbedderContract):
    name = "openai"
    current: ClassVar[EmbeddingsServer | None] = None

    @pytest.fixture(autouse=True)
    def _server(self, server: EmbeddingsServer) -> None:
        type(self).current = server

    def calls(self) -> int | None:
        return None if self.current is None else len(self.current.requests)


def test_batches_are_cut_at_256_and_the_results_keep_the_input_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from akgentic.testing.embeddings_server import text_vector

    with EmbeddingsServer(dimension=16, api_key="sk-test") as narrow:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", narrow.base_url)
        embedder = OpenAIEmbedder("nomic-embed-text", 16)  # a local model name, any width
        texts = [f"text {i}" for i in range(300)]
        vectors = embedder.embed(texts)
    assert [len(r["input"]) for r in narrow.requests] == [256, 44]
    assert all("dimensions" not in r for r in narrow.requests)
    assert vectors[299] == pytest.approx(text_vector("text 299", 16))
    assert vectors[0] == pytest.approx(text_vector("text 0", 16))


def test_a_compatible_server_with_another_width_is_an_embedding_error(
    server: EmbeddingsServer,
) -> None:
    with pytest.raises(EmbeddingError, match="768"):
        OpenAIEmbedder("nomic-embed-text", 768).embed(["hello"])


def test_a_wrong_key_is_an_embedding_error_not_a_crash(
    server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(EmbeddingError, match="request failed"):
        OpenAIEmbedder("text-embedding-3-small", 1536).embed(["x"])


def test_missing_credentials_are_a_reason_not_an_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    openai_spec = get_embedder_spec("openai")
    azure_spec = get_embedder_spec("azure")
    assert openai_spec.available is not None and azure_spec.available is not None
    assert openai_spec.available() == "OPENAI_API_KEY is not set"
    assert azure_spec.available() == "AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT not set"
    assert openai_spec.models["text-embedding-3-large"] == 3072
