"""EmbedderContract: the behaviour every embedder must show, as one pytest class.

An embedder plugin subclasses this class in its test suite, naming the embedder as
registered (``name``) and the model to test (``model``, default the spec's
``default_model``)::

    class TestHashing(EmbedderContract):
        name = "hashing"

The embedder is built through the plugin registry, so the test also proves the
plugin registers it. ``deterministic = False`` skips the repeat check (a remote
model); a subclass whose embedder talks to a server overrides ``calls`` to count
the requests it received, so that ``embed([])`` is seen to make none.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from akgentic.plugins.specs import EmbedderSpec
from akgentic.vector.embedder import Embedder
from akgentic.vector.registry import embedder_unavailable, get_embedder_spec

__all__ = ["EmbedderContract"]


class EmbedderContract:
    """Subclass with ``name`` (and ``model``); every test here must pass."""

    name: ClassVar[str] = ""
    model: ClassVar[str] = ""
    dimension: ClassVar[int | None] = None
    deterministic: ClassVar[bool] = True

    @pytest.fixture
    def spec(self) -> EmbedderSpec:
        """The registered record of the embedder under test."""
        return get_embedder_spec(self.name)

    def model_and_width(self, spec: EmbedderSpec) -> tuple[str, int]:
        """The model under test and the width to build it at."""
        model = self.model or spec.default_model
        width = self.dimension or spec.models.get(model) or spec.dimensions or 256
        return model, width

    @pytest.fixture
    def embedder(self, spec: EmbedderSpec) -> Iterator[Embedder]:
        """The embedder, built through its spec's factory."""
        model, width = self.model_and_width(spec)
        yield spec.factory(model, width, 20.0)

    def calls(self) -> int | None:
        """Requests the embedder made so far, when the subclass can count them."""
        return None

    def test_vectors_have_the_width_of_the_model(
        self, spec: EmbedderSpec, embedder: Embedder
    ) -> None:
        model, width = self.model_and_width(spec)
        assert (embedder.name, embedder.model, embedder.dimension) == (self.name, model, width)
        if model in spec.models:
            assert spec.models[model] == width
        for vector in embedder.embed(["a sentence to embed"]):
            assert len(vector) == width

    def test_one_vector_per_input_in_order(self, embedder: Embedder) -> None:
        texts = ["alpha release notes", "beta test plan", "gamma ray burst"]
        together = embedder.embed(texts)
        assert len(together) == 3
        alone = [embedder.embed([t])[0] for t in texts]
        for a, b in zip(together, alone, strict=True):
            assert a == pytest.approx(b, abs=1e-4)
        assert together[0] != pytest.approx(together[1], abs=1e-4)

    def test_embedding_nothing_makes_no_call(self, embedder: Embedder) -> None:
        before = self.calls()
        assert embedder.embed([]) == []
        assert self.calls() == before

    def test_a_deterministic_embedder_repeats_itself(self, embedder: Embedder) -> None:
        if not self.deterministic:
            pytest.skip("this embedder is not deterministic")
        text = ["the same text twice"]
        assert embedder.embed(text) == embedder.embed(text)

    def test_over_long_input_is_cut_not_rejected(
        self, spec: EmbedderSpec, embedder: Embedder
    ) -> None:
        long_text = "word " * (spec.max_input_chars + 1000)
        vectors = embedder.embed([long_text, "short"])
        assert len(vectors) == 2
        assert all(len(v) == embedder.dimension for v in vectors)

    def test_unicode_and_lone_surrogates_embed(self, embedder: Embedder) -> None:
        vectors = embedder.embed(["Straße 🚀 مرحبا", "broken \ud800 half"])
        assert len(vectors) == 2

    def test_availability_never_raises(self, spec: EmbedderSpec) -> None:
        reason: Any = embedder_unavailable(spec)
        assert reason is None or isinstance(reason, str)
        if spec.available is not None:
            direct = spec.available()
            assert direct is None or isinstance(direct, str)
