"""The ``hashing`` embedder: the embedder contract kit, and what lexical hashing promises."""

from __future__ import annotations

import math

from akgentic_embed_local.hashing import HashingEmbedder

from akgentic.testing import EmbedderContract


class TestHashingEmbedder(EmbedderContract):
    name = "hashing"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_shared_words_score_higher_than_unrelated_words() -> None:
    embedder = HashingEmbedder(dimension=256)
    deploy, deploy_web, cooking = embedder.embed(
        ["deploy the service", "deploy the web service", "a recipe for bread"]
    )
    assert cosine(deploy, deploy_web) > 0.5
    assert cosine(deploy, cooking) < cosine(deploy, deploy_web)


def test_case_and_compatibility_forms_fold_alike() -> None:
    embedder = HashingEmbedder(dimension=64)
    a, b = embedder.embed(["STRASSE \uff21\uff22\uff23", "straße abc"])  # fullwidth ABC
    assert math.isclose(cosine(a, b), 1.0)


def test_vectors_are_unit_length_even_without_tokens() -> None:
    embedder = HashingEmbedder(dimension=32)
    for vector in embedder.embed(["", "   ", "!!!", "word"]):
        assert math.isclose(sum(v * v for v in vector), 1.0)


def test_the_vectors_are_fixed_values_not_seeded_by_the_process() -> None:
    # blake2b, never hash(): a subprocess with another hash seed gets the same vector.
    import subprocess
    import sys

    code = (
        "from akgentic_embed_local.hashing import HashingEmbedder;"
        "print(HashingEmbedder(dimension=8).embed(['hello world'])[0])"
    )
    here = str(HashingEmbedder(dimension=8).embed(["hello world"])[0])
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            timeout=60,
            check=True,
        )
        assert out.stdout.strip() == here
