"""``bench/vector.py`` prints every key the issue's checks read, in the stated shape.

The bench runs for real in a subprocess at a tenth of its sizes (``--quick``), on every
installed backend and the ``hashing`` embedder (``minilm`` is left out to keep the
test short: its figures go through the same code). Speeds are not asserted; what is
asserted is the report's shape and the two correctness figures the bench measures
(a resumed store answers the same, and a one-row add logs what it logged at 10 rows).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "vector.py"


def _bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vector_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_the_quick_bench_reports_every_key_for_every_installed_backend() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--embedders", "hashing"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    expected = {"inmemory"}
    if _installed("akgentic_qdrant"):
        expected.add("qdrant")
        if _installed("qdrant_edge"):
            expected.add("qdrant-edge")
    assert set(report["backends"]) == expected
    sizes = [str(n) for n in report["sizes"]]
    assert sizes == ["100", "1000", "10000"]
    module = _bench_module()
    for name, figures in report["backends"].items():
        assert set(module.BACKEND_KEYS) <= set(figures), name
        assert list(figures["query_p50_ms"]) == sizes
        assert list(figures["query_p99_ms"]) == sizes
        assert figures["upsert_rows_per_s"] > 0
        assert figures["mib_per_10000"] > 0, name  # resident, so native engines count too
    inmemory = report["backends"]["inmemory"]
    assert list(inmemory["exact_query_p50_ms"]) == sizes
    assert all(value >= 0.99 for value in inmemory["recall_at_10"].values())
    assert inmemory["restore_s_10000"] > 0
    assert inmemory["restore_same_results"] is True
    small, large = inmemory["log_bytes_per_add_one"].values()
    assert abs(large - small) < 200
    assert set(report["embedders"]) == {"hashing"}
    assert set(module.EMBEDDER_KEYS) <= set(report["embedders"]["hashing"])


def test_a_report_missing_a_key_is_refused() -> None:
    module = _bench_module()
    figures = {
        "upsert_rows_per_s": 1,
        "query_p50_ms": {"1": 0.1},
        "query_p99_ms": {"1": 0.2},
        "hybrid_p50_ms_10000": 0.3,
        "restore_s_10000": 0.1,
        "mib_per_10000": 1.0,
        "add_one_ms_10000": 0.1,
    }
    complete = {"sizes": [1], "backends": {"inmemory": figures}, "embedders": {}}
    module.check_report(complete)
    for key in module.BACKEND_KEYS:
        broken = {k: v for k, v in figures.items() if k != key}
        with pytest.raises(SystemExit, match=key):
            module.check_report({**complete, "backends": {"inmemory": broken}})
    with pytest.raises(SystemExit, match="not keyed by"):
        module.check_report({**complete, "sizes": [1, 2]})
    with pytest.raises(SystemExit, match="texts_per_s_batch"):
        module.check_report({**complete, "embedders": {"x": {"texts_per_s_single": 1.0}}})
