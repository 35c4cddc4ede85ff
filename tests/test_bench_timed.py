"""The benches that took over the unit tests' wall-clock bounds print their report.

``bench/cards.py`` (the alias bomb's refusal time, from ``tests/team/test_hostile_cards.py``)
runs for real with ``--quick``; its figures are not asserted, only the report's shape
and that the bomb was refused. ``bench/demo.py`` and ``bench/tools_rag.py`` run the demo
and ten thousand files, too long for a unit test: their report builders are imported
and checked for the keys they name.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cards_bench_prints_one_json_object_with_its_keys() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH / "cards.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert tuple(report) == _bench("cards").KEYS
    assert report["runs"] == 1 and report["alias_bomb_peak_mb"] > 0


def test_the_demo_bench_names_its_keys() -> None:
    module = _bench("demo")
    assert module.KEYS == ("runs", "demo_s", "demo_s_max", "returncode")
    assert callable(module.measure)


def test_the_rag_bench_documents_the_bounds_it_took_over() -> None:
    doc = _bench("tools_rag").__doc__ or ""
    for key in (
        "index_call_cpu_s_10000_first",
        "index_call_cpu_s_10000_second",
        "index_call_s_hostile_tree",
        "search_ms_50kb_query",
    ):
        assert key in doc
