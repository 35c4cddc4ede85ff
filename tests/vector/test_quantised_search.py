"""The int8 path of the in-memory engine answers what the exact scan answers.

Large collections are searched through int8 codes, then the certified candidates are
scored exactly (:mod:`akgentic.vector.quantised`). These tests compare that path with
the exact scan of the same rows (a storage with ``quantise_from=None``) on seeded data,
check the error bound the certification rests on, and run the backend contract kit
with the int8 path taken from the first row on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from akgentic.testing import VectorBackendContract
from akgentic.vector import VectorEntry, VectorStoreParam
from akgentic.vector.engine import InMemoryBackend, InMemoryStorage
from akgentic.vector.quantised import (
    QUANTISE_FROM_ROWS,
    approximate_scores,
    certified_candidates,
    error_bounds,
    quantise,
)

DIM = 384
ROWS = QUANTISE_FROM_ROWS + 5_000
TEAM = "team-q"
PARAM = VectorStoreParam(backend="inmemory", dimension=DIM)


def _matrix(rows: int, seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)


def _entries(first: int, count: int, **fields: Any) -> list[VectorEntry]:
    return [
        VectorEntry(ref_type="doc", ref_id=str(i), text=f"row {i}", vector=[], **fields)
        for i in range(first, first + count)
    ]


def _pair(rows: np.ndarray[Any, Any]) -> tuple[InMemoryBackend, InMemoryBackend]:
    """The same rows in a quantising backend and in an exact-only one."""
    backends = []
    for quantise_from in (QUANTISE_FROM_ROWS, None):
        backend = InMemoryBackend(InMemoryStorage(quantise_from=quantise_from), team_id=TEAM)
        backend.create_collection("docs", PARAM)
        for start in range(0, len(rows), 5_000):
            chunk = rows[start : start + 5_000]
            backend.add_matrix("docs", _entries(start, len(chunk)), chunk)
        backends.append(backend)
    return backends[0], backends[1]


def _ranked(backend: InMemoryBackend, query: list[float], k: int, **kw: Any) -> list[str]:
    return [hit.ref_id for hit in backend.search("docs", query, k, **kw).hits]


def _recall(found: list[list[str]], truth: list[list[str]]) -> float:
    hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True))
    return hits / sum(len(t) for t in truth)


@pytest.fixture(scope="module")
def seeded() -> tuple[InMemoryBackend, InMemoryBackend]:
    return _pair(_matrix(ROWS, seed=20261203))


def test_the_quantised_top_10_matches_the_exact_scan_on_a_seeded_dataset(
    seeded: tuple[InMemoryBackend, InMemoryBackend],
) -> None:
    quantised, exact = seeded
    queries = _matrix(50, seed=7).tolist()
    found = [_ranked(quantised, q, 10) for q in queries]
    truth = [_ranked(exact, q, 10) for q in queries]
    assert _recall(found, truth) >= 0.99
    # The candidates are certified, so the ranking is the exact one, not only the set.
    assert found == truth
    assert quantised.storage.collections["docs"].codes is not None  # the int8 path ran
    assert exact.storage.collections["docs"].codes is None


def test_scores_are_the_exact_scores(seeded: tuple[InMemoryBackend, InMemoryBackend]) -> None:
    quantised, exact = seeded
    query = _matrix(1, seed=8)[0].tolist()
    a = quantised.search("docs", query, 10).hits
    b = exact.search("docs", query, 10).hits
    assert [h.ref_id for h in a] == [h.ref_id for h in b]
    assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)


def _unit(rows: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float32]]:
    unit: np.ndarray[Any, np.dtype[np.float32]] = (
        rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    ).astype(np.float32)
    return unit


def test_a_few_rows_are_rescored_not_the_collection() -> None:
    unit = _unit(_matrix(ROWS, seed=11))
    query = _unit(unit[0] * 0.3 + _matrix(1, seed=12)[0] / np.sqrt(DIM))
    coded = quantise(unit)
    slots = certified_candidates(coded, approximate_scores(coded, query), 10)
    assert slots is not None
    assert 10 <= len(slots) < ROWS // 100
    truth = np.argsort(-(unit @ query), kind="stable")[:10]
    assert set(truth.tolist()) <= set(slots.tolist())


def test_the_error_bound_holds_where_rounding_errors_line_up() -> None:
    # Components half a step from a code, and a query whose signs follow the errors,
    # make the rounding errors add up: the worst case the bound must cover.
    rng = np.random.default_rng(3)
    peaks = rng.uniform(0.2, 1.0, size=(200, 1))
    steps = rng.integers(-126, 126, size=(200, DIM)) + 0.4999
    rows = (steps * peaks / 127).astype(np.float32)
    rows[:, 0] = peaks[:, 0]  # the peak sets the scale
    unit = _unit(rows)
    coded = quantise(unit)
    errors = unit - coded.codes.astype(np.float32) * coded.scales[:, None]
    worst = 0.0
    for row in range(0, 200, 10):
        query = _unit(np.sign(errors[row]))
        found = approximate_scores(coded, query)
        gaps = np.abs(unit @ query - found.scores)
        bounds = error_bounds(coded, np.arange(len(unit)), found.query_error)
        assert np.all(gaps <= bounds)
        worst = max(worst, float(gaps[row] / bounds[row]))
    assert worst > 0.5  # the errors did line up: the bound is nearly reached here


def test_near_duplicate_rows_fall_back_to_the_exact_scan_and_agree() -> None:
    # Rows closer together than the codes can tell apart: too many candidates, so the
    # certification gives up and the exact scan answers.
    base = _matrix(1, seed=5)
    rows = base + 1e-4 * _matrix(ROWS, seed=6)
    quantised, exact = _pair(rows)
    query = base[0].tolist()
    coded = quantised.storage.collections["docs"].quantised()
    assert certified_candidates(coded, approximate_scores(coded, _unit(base[0])), 10) is None
    assert _ranked(quantised, query, 10) == _ranked(exact, query, 10)


def test_writes_after_the_codes_are_built_keep_them_in_step() -> None:
    rows = _matrix(ROWS, seed=21)
    quantised, exact = _pair(rows)
    probes = _matrix(20, seed=22)
    queries = probes.tolist()
    _ranked(quantised, queries[0], 10)  # builds the codes
    collection = quantised.storage.collections["docs"]
    built = collection.columns.shape[1]
    for backend in (quantised, exact):
        # Replace rows with the probes themselves: each must now be its probe's best hit.
        backend.add_matrix("docs", _entries(100, 20), probes)
        # Enough new rows to grow the capacity, codes included.
        backend.add_matrix("docs", _entries(ROWS, built), _matrix(built, seed=23))
        backend.remove("docs", [str(i) for i in range(1_000, 5_000, 3)])
    assert collection.columns.shape[1] > built
    assert collection.codes is not None and len(collection.codes.codes) > built
    for i, query in enumerate(queries):
        found = _ranked(quantised, query, 10)
        assert found[0] == str(100 + i)
        assert found == _ranked(exact, query, 10)
    kept = quantised.storage.collections["docs"].quantised()
    fresh = quantise(quantised.storage.collections["docs"].vectors())
    assert np.array_equal(kept.codes, fresh.codes)
    assert np.array_equal(kept.scales, fresh.scales)
    assert np.array_equal(kept.errors, fresh.errors)
    assert np.array_equal(kept.norms, fresh.norms)


def test_scope_and_team_predicates_apply_on_the_quantised_path() -> None:
    rows = _matrix(ROWS, seed=31)
    backends = []
    for quantise_from in (QUANTISE_FROM_ROWS, None):
        storage = InMemoryStorage(quantise_from=quantise_from)
        mine = InMemoryBackend(storage, team_id=TEAM)
        theirs = InMemoryBackend(storage, team_id="team-other")
        for backend in (mine, theirs):
            backend.create_collection("docs", PARAM)
        half, quarter = ROWS // 2, ROWS // 4
        mine.add_matrix("docs", _entries(0, quarter, scope="a"), rows[:quarter])
        mine.add_matrix("docs", _entries(quarter, half - quarter, scope="b"), rows[quarter:half])
        theirs.add_matrix("docs", _entries(0, ROWS - half), rows[half:])
        backends.append(mine)
    quantised, exact = backends
    for query in _matrix(10, seed=32).tolist():
        for scope in (None, "a", "b"):
            found = quantised.search("docs", query, 10, scope=scope).hits
            truth = exact.search("docs", query, 10, scope=scope).hits
            assert [h.ref_id for h in found] == [h.ref_id for h in truth]
            assert scope is None or {h.scope for h in found} == {scope}


class TestInMemoryBackendQuantisedFromTheFirstRow(VectorBackendContract):
    """The contract kit with every search of more than ``top_k`` rows taking the int8 path."""

    supports_state = True

    @pytest.fixture
    def make_backend(self) -> Any:
        storage = InMemoryStorage(quantise_from=1)

        def make(team_id: str | None, tenant: str | None = None) -> InMemoryBackend:
            return InMemoryBackend(storage, team_id=team_id, tenant=tenant)

        return make
