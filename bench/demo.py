"""Wall time of the demo (``akgentic demo``, what ``make demo`` runs), printed as ONE JSON object::

    {"runs": 3, "demo_s": ..., "demo_s_max": ..., "returncode": 0}

Each run is ``python -m akgentic.cli.demo_cmd demo`` in a fresh temporary directory,
offline on the scripted model (no model configured, the default SQLite store under
that directory): creating the team, the conversation, stopping, resuming from the
store and the answer after the resume. ``demo_s`` is the median wall time of the
whole process (the spec: under 45 s), ``demo_s_max`` the slowest run. It replaces a
wall-clock bound in ``tests/cli/test_demo_command.py``, which checks what the demo
prints and never the seconds.
Run: ``.venv/bin/python bench/demo.py [--runs N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

KEYS = ("runs", "demo_s", "demo_s_max", "returncode")
_MODEL_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AKGENTIC_MODEL", "AKGENTIC_PATH")


def run_once() -> tuple[float, int]:
    """Seconds of one demo process and its exit code."""
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARIABLES}
    env.pop("AKGENTIC_STORE", None)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "akgentic.cli.demo_cmd", "demo"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
            timeout=600,
        )
        return time.perf_counter() - started, done.returncode


def measure(runs: int) -> dict[str, float | int]:
    """The report (see the module docstring)."""
    results = [run_once() for _ in range(runs)]
    seconds = [s for s, _ in results]
    return {
        "runs": runs,
        "demo_s": round(statistics.median(seconds), 2),
        "demo_s_max": round(max(seconds), 2),
        "returncode": max((code for _, code in results), key=abs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run")
    options = parser.parse_args()
    print(json.dumps(measure(1 if options.quick else options.runs)))


if __name__ == "__main__":
    main()
