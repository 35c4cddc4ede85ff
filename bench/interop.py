"""What the open protocols add to a turn, and A2A throughput: one JSON object.

Runs the three protocol benchmarks of ``bench/protocols/``, each in a process of its own
(each starts its own servers and teams), and merges their figures:

- ``mcp_stdio_ms_p50``, ``mcp_http_ms_p50`` (``protocols/mcp_latency.py``): an MCP
  ``ask`` round trip on the example echo team, minus a direct ``TeamRuntime.send`` and
  wait for the reply on the same kind of team;
- ``a2a_ms_p50``, ``a2a_tasks_per_s`` (``protocols/a2a_latency.py``): an A2A
  ``SendMessage`` round trip through ``akgentic serve`` minus the direct send, and tasks
  per second with 32 in flight;
- ``agui_first_event_ms_p50`` (``protocols/agui_latency.py``): POST to the first
  ``TEXT_MESSAGE_CONTENT`` of the AG-UI stream minus the direct send.

The issue's targets are in ``targets`` and whether each is met in ``targets_met``. A
protocol whose plugin is not installed, or whose benchmark fails, is reported under
``skipped`` with its last line of error output, and its keys are absent.
``--samples N`` is passed to each (default 200).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "protocols"
#: Benchmark script -> the keys it must report.
PARTS = {
    "mcp_latency.py": ("mcp_stdio_ms_p50", "mcp_http_ms_p50"),
    "a2a_latency.py": ("a2a_ms_p50", "a2a_tasks_per_s"),
    "agui_latency.py": ("agui_first_event_ms_p50",),
}
#: Key -> (target, True when the figure must be at most the target, False at least).
TARGETS: dict[str, tuple[float, bool]] = {
    "mcp_stdio_ms_p50": (5.0, True),
    "mcp_http_ms_p50": (5.0, True),
    "a2a_ms_p50": (5.0, True),
    "agui_first_event_ms_p50": (5.0, True),
    "a2a_tasks_per_s": (500.0, False),
}


def run_part(script: str, samples: int) -> tuple[dict[str, Any] | None, str]:
    """The JSON object ``script`` printed, or None and why it could not run."""
    done = subprocess.run(
        [sys.executable, str(HERE / script), "--samples", str(samples)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        errors = [line for line in done.stderr.splitlines() if line.strip()]
        return None, errors[-1] if errors else f"exit code {done.returncode}"
    try:
        report = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None, f"not one JSON object: {lines[-1][:200]}"
    if not isinstance(report, dict):
        return None, "not one JSON object"
    return report, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    result: dict[str, Any] = {"samples": args.samples, "details": {}, "skipped": {}}
    for script, keys in PARTS.items():
        report, why = run_part(script, args.samples)
        if report is None:
            result["skipped"][script] = why
            continue
        missing = [key for key in keys if key not in report]
        if missing:
            result["skipped"][script] = f"report lacks {missing}"
            continue
        for key in keys:
            result[key] = report[key]
        result["details"][script] = report
    result["targets"] = {key: target for key, (target, _) in TARGETS.items()}
    result["targets_met"] = {
        key: (result[key] <= target if at_most else result[key] >= target)
        for key, (target, at_most) in TARGETS.items()
        if key in result
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
