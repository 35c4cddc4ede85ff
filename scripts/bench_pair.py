"""Compare ``bench/*.py`` between two checkouts: runs interleaved, figures side by side.

``python scripts/bench_pair.py BEFORE AFTER [--rounds N] [--only NAME ...]`` runs every
benchmark of BEFORE (each checkout with its own ``.venv``), BEFORE then AFTER, round
after round, so a machine whose speed drifts slows both alike. It prints one row per
numeric figure: the median of each side, the best of each side (highest for rates,
lowest for times) and how much worse AFTER is, in percent. A row is marked when AFTER
is worse by more than ``--tolerance`` on both the median and the best, which noise
alone rarely does to both. Every run's JSON is kept under ``--out``.

It is for a quiet machine: other work running beside it moves figures by far more
than the 5% it is meant to see.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: Figure names (lower case) where a larger value is better.
HIGHER_IS_BETTER = ("per_s", "ratio", "throughput")


def _flatten(prefix: str, value: object, out: dict[str, float]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out[prefix] = float(value)


def _run(checkout: Path, bench: str, out: Path, timeout: float) -> dict[str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [str(checkout / ".venv" / "bin" / "python"), f"bench/{bench}.py"],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    out.write_text(done.stdout)
    lines = done.stdout.strip().splitlines()
    print(
        f"  {bench} {checkout.name}: exit {done.returncode} in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    figures: dict[str, float] = {}
    if done.returncode == 0 and lines:
        _flatten("", json.loads(lines[-1]), figures)
    return figures


def _worse(before: float, after: float, higher: bool) -> float:
    if before == 0:
        return 0.0
    return (before - after) / before if higher else (after - before) / before


def main() -> int:
    """Run the pairs and print the table; exit 1 when a figure is marked worse."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None, help="bench names (no .py)")
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=Path("bench-pair-out"))
    options = parser.parse_args()
    benches = options.only or sorted(p.stem for p in (options.before / "bench").glob("*.py"))
    options.out.mkdir(parents=True, exist_ok=True)
    seen: dict[tuple[str, str], dict[str, list[float]]] = {}
    for bench in benches:
        for round_ in range(1, options.rounds + 1):
            for side, checkout in (("before", options.before), ("after", options.after)):
                path = options.out / f"{bench}.{side}.{round_}.json"
                for name, value in _run(checkout, bench, path, options.timeout).items():
                    seen.setdefault((bench, name), {"before": [], "after": []})[side].append(value)
    marked = 0
    for (bench, name), sides in sorted(seen.items()):
        before, after = sides["before"], sides["after"]
        if not before or not after:
            continue
        higher = any(word in name.lower() for word in HIGHER_IS_BETTER)
        best = max if higher else min
        median_worse = _worse(statistics.median(before), statistics.median(after), higher)
        best_worse = _worse(best(before), best(after), higher)
        flag = median_worse > options.tolerance and best_worse > options.tolerance
        marked += flag
        print(
            f"{bench:16} {name[:56]:56} median {statistics.median(before):.4g} -> "
            f"{statistics.median(after):.4g} ({median_worse * 100:+.1f}%)  best "
            f"{best(before):.4g} -> {best(after):.4g} ({best_worse * 100:+.1f}%)"
            + ("  WORSE" if flag else "")
        )
    print(f"{marked} figures worse by more than {options.tolerance:.0%} on median and best")
    return 1 if marked else 0


if __name__ == "__main__":
    sys.exit(main())
