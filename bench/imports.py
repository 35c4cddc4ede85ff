"""Cold-import cost of the kernel packages, printed as ONE JSON object::

    {"runs": 15, "python_start_ms": ...,
     "core_import_ms": ..., "core_runtime_ms": ...,
     "tool_import_ms": ..., "tool_card_surface_ms": ...}

Each figure is the median over fresh interpreters of the wall time of one import
statement, timed inside the interpreter (its own start-up is ``python_start_ms``,
the whole-process time of ``python -c pass``, for scale):

- ``core_import_ms``: ``import akgentic.core`` (lazy exports: nothing behind it yet);
- ``core_runtime_ms``: ``from akgentic.core import ActorSystem, Orchestrator`` (pykka,
  pydantic and the message models);
- ``tool_import_ms``: ``import akgentic.tool`` with every installed plugin left
  unloaded (the figure ``bench/tools.py`` reports as ``import_akgentic_tool_ms``);
- ``tool_card_surface_ms``: ``from akgentic.tool import ToolCard, ToolFactory,
  BaseToolParam``, what a card author's module pays (pydantic and the command layer).

These replace a wall-clock unit test: the tests check which modules an import loads
(``tests/core/test_import.py``, ``tests/tool/test_import_light.py``), this measures
how long it takes. Run: ``.venv/bin/python bench/imports.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

STATEMENTS = {
    "core_import_ms": "import akgentic.core",
    "core_runtime_ms": "from akgentic.core import ActorSystem, Orchestrator",
    "tool_import_ms": "import akgentic.tool",
    "tool_card_surface_ms": "from akgentic.tool import ToolCard, ToolFactory, BaseToolParam",
}


def cold_import_ms(statement: str) -> float:
    """Wall milliseconds of ``statement`` in a fresh interpreter."""
    code = (
        "import time\n"
        "t = time.perf_counter()\n"
        f"{statement}\n"
        "print((time.perf_counter() - t) * 1000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return float(out.stdout.split()[-1])


def python_start_ms() -> float:
    """Whole-process wall milliseconds of ``python -c pass`` (site and .pth files included)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=120)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per figure")
    runs = parser.parse_args().runs
    samples: dict[str, list[float]] = {key: [] for key in STATEMENTS}
    starts: list[float] = []
    # Interleaved, so a burst of load on the shared machine hits every figure alike.
    for _ in range(runs):
        starts.append(python_start_ms())
        for key, statement in STATEMENTS.items():
            samples[key].append(cold_import_ms(statement))
    result: dict[str, float | int] = {
        "runs": runs,
        "python_start_ms": round(statistics.median(starts), 1),
    }
    result.update({key: round(statistics.median(v), 1) for key, v in samples.items()})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
