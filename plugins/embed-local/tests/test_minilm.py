"""The ``minilm`` embedder: the contract kit on the real all-MiniLM-L6-v2 model.

It needs the ``minilm`` extra (torch and the model package): without it the tests
skip with the reason, except under ``CI=true``, where CI installs it
(``make install-heavy``) and a missing install fails.
"""

from __future__ import annotations

import os

import pytest
from akgentic_embed_local.minilm import minilm_unavailable

from akgentic.testing import EmbedderContract

_REASON = minilm_unavailable()
if _REASON is not None and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI must run the minilm tests: {_REASON} (make install-heavy)")
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


class TestMiniLMEmbedder(EmbedderContract):
    name = "minilm"


def test_related_sentences_are_closer_than_unrelated_ones() -> None:
    from akgentic_embed_local.minilm import MiniLMEmbedder

    car, automobile, bread = MiniLMEmbedder().embed(
        ["I drive my car to work", "the automobile takes me to the office", "baking sourdough"]
    )

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(car, automobile) > cosine(car, bread) + 0.2


def test_an_embed_leaves_the_process_torch_threads_as_they_were(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch
    from akgentic_embed_local.minilm import THREADS_VARIABLE, MiniLMEmbedder, encode_threads

    embedder = MiniLMEmbedder()
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        one = embedder.embed(["the release plan"])[0]
        assert torch.get_num_threads() == 3
        monkeypatch.setenv(THREADS_VARIABLE, "2")
        assert encode_threads() == 2
        two = embedder.embed(["the release plan"])[0]
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
    assert max(abs(a - b) for a, b in zip(one, two, strict=True)) < 1e-5
    for bad in ("0", "-1", "many", ""):
        monkeypatch.setenv(THREADS_VARIABLE, bad)
        assert encode_threads() == 1
