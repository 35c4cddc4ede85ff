"""The hybrid rule: normalisation, fusion at alpha 0.7, stable ranking, keyword matching."""

from __future__ import annotations

import pytest

from akgentic.vector import SearchHit, SearchResult, VectorQuery
from akgentic.vector.hybrid import fuse, hybrid_search, keyword_match, semantic_scores


def test_the_worked_example_of_the_rule() -> None:
    ranked = fuse(["a", "b"], {"c": 0.9, "a": 0.5, "d": 0.5}, alpha=0.7)
    assert [k for k, _ in ranked] == ["c", "a", "b", "d"]
    scores = dict(ranked)
    assert scores["c"] == pytest.approx(0.7, abs=1e-9)
    assert scores["a"] == pytest.approx(0.3, abs=1e-9)
    assert scores["b"] == pytest.approx(0.3, abs=1e-9)
    assert scores["d"] == pytest.approx(0.0, abs=1e-9)


def test_a_lone_hit_fuses_to_alpha_and_the_extremes_keep_every_key() -> None:
    [(key, score)] = fuse([], {"x": 0.2})
    assert key == "x" and score == pytest.approx(0.7)
    assert dict(fuse(["k"], {"v": 0.9}, alpha=1.0))["k"] == 0.0
    assert dict(fuse(["k"], {"v": 0.9}, alpha=0.0))["v"] == 0.0


def test_below_half_a_keyword_only_hit_beats_the_best_vector_only_one() -> None:
    assert fuse(["kw"], {"vec": 0.99, "low": 0.1}, alpha=0.4)[0][0] == "kw"


class Store:
    def __init__(self, hits: list[tuple[str, float]]) -> None:
        self.hits = hits
        self.calls: list[int] = []

    def search(self, collection: str, vector: list[float], top_k: int, **_: object) -> SearchResult:
        self.calls.append(top_k)
        return SearchResult(
            hits=[SearchHit(ref_type="t", ref_id=r, text="", score=s) for r, s in self.hits]
        )


class Embedder:
    name = "fake"
    model = "fake"
    dimension = 2

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def test_the_semantic_side_overfetches_keeps_first_scores_and_applies_the_threshold() -> None:
    store = Store([("1", 0.9), ("2", 0.49), ("1", 0.3), ("3", 0.6)])
    scores = semantic_scores(
        store, Embedder(), "planning", "q", 5, query=VectorQuery(score_threshold=0.5)
    )
    assert store.calls == [10]
    assert scores == {"1": 0.9, "3": 0.6}


def test_a_hit_under_the_threshold_stays_when_the_keyword_side_finds_it() -> None:
    store = Store([("7", 0.49)])
    result = hybrid_search(
        ["7"], store, Embedder(), "planning", "q", 5, query=VectorQuery(score_threshold=0.5)
    )
    assert result.vector_scores == {}
    assert [k for k, _ in result.ranked] == ["7"]
    assert result.ranked[0][1] == pytest.approx(0.3)


def test_a_missing_store_or_failing_search_gives_no_semantic_hits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken(Store):
        def search(self, *args: object, **kwargs: object) -> SearchResult:
            raise RuntimeError("down")

    assert semantic_scores(None, Embedder(), "c", "q", 3) == {}
    assert semantic_scores(Broken([]), Embedder(), "c", "q", 3) == {}
    assert "failed" in caplog.text
    keyword_only = hybrid_search(["a"], None, None, "c", "q", 3, semantic=False)
    assert [k for k, _ in keyword_only.ranked] == ["a"]
    assert keyword_only.ranked[0][1] == pytest.approx(0.3)


def test_keywords_fold_case_and_width_and_every_term_must_appear() -> None:
    assert keyword_match("STRASSE", ["Straße"])
    assert keyword_match("ÉCOLE", ["une école"])
    assert keyword_match("deploy service", ["deploy the web service"])
    assert keyword_match("tea", ["Alice", "likes tea"])
    assert not keyword_match("deploy database", ["deploy the web service"])
    assert not keyword_match("   ", ["anything"])


def test_a_blank_query_embeds_nothing_and_searches_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Counting(Embedder):
        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def embed(self, texts: list[str]) -> list[list[float]]:
            self.calls.append(texts)
            return super().embed(texts)

    store, embedder = Store([("1", 0.9)]), Counting()
    for blank in ("", "   ", "\t\n"):
        assert semantic_scores(store, embedder, "planning", blank, 5) == {}
        result = hybrid_search(["k"], store, embedder, "planning", blank, 5)
        assert [key for key, _ in result.ranked] == ["k"]
    assert embedder.calls == [] and store.calls == []
    assert "skipped" not in caplog.text
    assert semantic_scores(store, embedder, "planning", "deploy", 5) == {"1": 0.9}
    assert embedder.calls == [["deploy"]]
