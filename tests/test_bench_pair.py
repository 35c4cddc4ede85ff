"""scripts/bench_pair.py: two checkouts' benchmarks side by side, a slower figure marked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_pair.py"


def _checkout(root: Path, figures: dict[str, float]) -> Path:
    (root / "bench").mkdir(parents=True)
    (root / "bench" / "fake.py").write_text(f"print({json.dumps(json.dumps(figures))})\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    os.symlink(sys.executable, root / ".venv" / "bin" / "python")
    return root


def test_a_slower_time_and_a_lower_rate_are_marked_and_a_faster_one_is_not(
    tmp_path: Path,
) -> None:
    before = _checkout(tmp_path / "before", {"call_ms": 10.0, "calls_per_s": 100.0, "x_ms": 5})
    after = _checkout(tmp_path / "after", {"call_ms": 12.0, "calls_per_s": 80.0, "x_ms": 4})
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(before), str(after), "--rounds", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    rows = {line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("fake")}
    assert rows["call_ms"].endswith("WORSE") and "(+20.0%)" in rows["call_ms"]
    assert rows["calls_per_s"].endswith("WORSE") and "(+20.0%)" in rows["calls_per_s"]
    assert not rows["x_ms"].endswith("WORSE")
    assert "2 figures worse" in done.stdout and done.returncode == 1
    assert len(list((tmp_path / "bench-pair-out").glob("fake.*.json"))) == 4
