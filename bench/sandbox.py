"""Sandbox speed: what one command costs on each backend, against a plain subprocess.

Prints one JSON object::

    {"backends": {"<name>": {"true_ms": {"p50": x, "p90": x},
                             "python_ms": {"cold": x, "warm": x},
                             "runs_per_s": {"1": x, "2": x}}},
     "plain": {"true_ms": {"p50": x, "p90": x}}}

``true_ms``: wall time of ``backend.run(["true"])`` as the caller sees it.
``python_ms``: ``python3 -c pass``, ``cold`` being the first run of a freshly
prepared backend (its ``prepare`` included) and ``warm`` the median of the next ones;
``null`` when the backend's image has no ``python3``. ``runs_per_s``: ``true`` runs
completed per second with 1 and with 2 callers at once (each on its own tree).
``plain`` is ``subprocess.run(["true"])`` without any sandbox.

Every usable backend is measured. Docker uses ``$DOCKER_HOST`` when an engine
answers; otherwise, as root with ``docker.io`` and ``busybox-static`` installed, a
private engine is started for the run (``--no-docker`` skips it). Run:
``.venv/bin/python bench/sandbox.py [--runs 40]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from akgentic.plugins import get_host
from akgentic.sandbox import ResourceLimits, SandboxBackend, backend_statuses

LIMITS = ResourceLimits()


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p90": round(p90, 2)}


@contextmanager
def _prepared(factory: Callable[[], SandboxBackend]) -> Iterator[tuple[SandboxBackend, float]]:
    tmp = Path(tempfile.mkdtemp(prefix="akgentic-bench-"))
    backend = factory()
    begin = time.perf_counter()
    backend.prepare(tmp, limits=LIMITS, timeout_s=300)
    prepare_ms = (time.perf_counter() - begin) * 1000
    try:
        yield backend, prepare_ms
    finally:
        backend.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _time_run(backend: SandboxBackend, argv: list[str]) -> tuple[float, int]:
    begin = time.perf_counter()
    result = backend.run(argv, cwd="", env={}, timeout_s=60)
    return (time.perf_counter() - begin) * 1000, result.exit_code


def _runs_per_s(factory: Callable[[], SandboxBackend], callers: int, runs: int) -> float:
    with ExitStack() as stack:
        backends = [stack.enter_context(_prepared(factory))[0] for _ in range(callers)]
        barrier = threading.Barrier(callers + 1)

        def work(backend: SandboxBackend) -> None:
            barrier.wait()
            for _ in range(runs):
                backend.run(["true"], cwd="", env={}, timeout_s=60)

        threads = [threading.Thread(target=work, args=(b,)) for b in backends]
        for thread in threads:
            thread.start()
        barrier.wait()
        begin = time.perf_counter()
        for thread in threads:
            thread.join()
        return round(callers * runs / (time.perf_counter() - begin), 1)


def measure(factory: Callable[[], SandboxBackend], runs: int) -> dict[str, Any]:
    """The figures of one backend."""
    true_ms: list[float] = []
    with _prepared(factory) as (backend, _):
        _time_run(backend, ["true"])  # first run pays the page cache, not measured
        for _ in range(runs):
            true_ms.append(_time_run(backend, ["true"])[0])
    python: dict[str, float | None] = {"cold": None, "warm": None}
    with _prepared(factory) as (backend, prepare_ms):
        cold, code = _time_run(backend, ["python3", "-c", "pass"])
        if code == 0:
            warm = [
                _time_run(backend, ["python3", "-c", "pass"])[0] for _ in range(max(3, runs // 4))
            ]
            python = {
                "cold": round(prepare_ms + cold, 2),
                "warm": round(statistics.median(warm), 2),
            }
    rps_runs = max(3, runs // 2)
    return {
        "true_ms": _percentiles(true_ms),
        "python_ms": python,
        "runs_per_s": {
            "1": _runs_per_s(factory, 1, rps_runs),
            "2": _runs_per_s(factory, 2, rps_runs),
        },
    }


def plain(runs: int) -> dict[str, Any]:
    """``true`` as a plain subprocess: the floor every sandbox adds to."""
    samples = []
    for _ in range(runs):
        begin = time.perf_counter()
        subprocess.run(["true"], check=True)
        samples.append((time.perf_counter() - begin) * 1000)
    return {"true_ms": _percentiles(samples)}


def _start_private_engine(stack: ExitStack) -> None:
    """Start akgentic-docker's private test engine and point the backend at it."""
    # Imported by name: the plugin is an optional, separately installed distribution.
    testing: Any = importlib.import_module("akgentic_docker.testing")
    try:
        engine = stack.enter_context(testing.LocalEngine())
    except testing.EngineUnavailable as exc:
        print(f"docker skipped: {exc}", file=sys.stderr)
        return
    os.environ["DOCKER_HOST"] = engine.host
    os.environ.setdefault("AKGENTIC_SANDBOX_IMAGE", testing.BUSYBOX_IMAGE)


def main() -> None:
    """Measure every usable backend and print the JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of `true` per backend")
    parser.add_argument("--no-docker", action="store_true", help="skip the Docker backend")
    args = parser.parse_args()
    specs = get_host().registry.sandbox_backends()
    report: dict[str, Any] = {"backends": {}, "plain": plain(args.runs)}
    with ExitStack() as stack:
        statuses = backend_statuses(specs)
        if not args.no_docker and "docker" in specs and not statuses[1].usable:
            _start_private_engine(stack)
            statuses = backend_statuses(specs)
        for status in statuses:
            if status.name == "docker" and args.no_docker:
                continue
            if not status.usable:
                print(f"{status.name} skipped: {status.reason}", file=sys.stderr)
                continue
            runs = args.runs if status.name != "docker" else max(5, args.runs // 8)
            report["backends"][status.name] = measure(specs[status.name].factory, runs)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
