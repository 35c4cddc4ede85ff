"""Workspace card speed: per-call latency of each tool, journal off and on.

Prints one JSON object::

    {"workspace": {...}, "workspace_journal": {...}}

Each section has ``write_ms_p50`` (a new file), ``read_ms_p50``, ``edit_ms_p50`` (a
one-line edit in a 200-line file), ``list_ms_p50``, ``grep_ms_1000_files`` and
``glob_ms_1000_files`` (median over a tree of 1,000 files x 100 lines; grep's pattern
matches one line per file, capped at 100 results), ``grep_all_lines_ms`` (a pattern
matching every line: the single global cap keeps it bounded), ``exec_true_ms_p50``
(``sh -c true`` through the card end to end on bubblewrap: ``true`` itself is
not on the allow-list; null when bwrap cannot run here)
and ``calls_per_s`` per tool. The cards are bound to a recording observer (no actor
system): what is measured is the card's own path.

``bench_workspace(quick)`` returns the two sections, to merge into ``bench/tools.py``.

Run: ``.venv/bin/python bench/tools_workspace.py [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

Section = dict[str, Any]


def _median_ms(func: Callable[[int], object], runs: int) -> tuple[float, float]:
    """Median milliseconds of ``func(i)`` over ``runs`` calls, and calls per second."""
    samples = []
    began = time.perf_counter()
    for i in range(runs):
        start = time.perf_counter()
        func(i)
        samples.append((time.perf_counter() - start) * 1000)
    total = time.perf_counter() - began
    return round(statistics.median(samples), 3), round(runs / total, 1)


def _section(journal: bool, quick: bool) -> Section:
    # By name: the plugin is optional and not on the kernel's type-checking path.
    plugin: Any = importlib.import_module("akgentic_workspace")
    card_class, exec_class = plugin.WorkspaceTool, plugin.WorkspaceExec

    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.testing import RecordingObserver

    runs = 30 if quick else 200
    if journal:
        runs = max(10, runs // 4)
    observer = RecordingObserver(name="@Bench", user_id="bench")
    card = card_class(workspace_id="journal" if journal else "plain", git_journal=journal)
    ToolFactory([card], observer=observer)
    tools = {tool.__name__: tool for tool in card.get_tools()}
    out: Section = {}
    per_s: dict[str, float] = {}

    out["write_ms_p50"], per_s["write"] = _median_ms(
        lambda i: tools["workspace_write"](f"new/{i}.txt", f"content {i}\n"), runs
    )
    tools["workspace_write"]("read.txt", "".join(f"line {n}\n" for n in range(200)))
    out["read_ms_p50"], per_s["read"] = _median_ms(
        lambda i: tools["workspace_read"]("read.txt"), runs
    )
    tools["workspace_write"]("edit.txt", "".join(f"line {n}\n" for n in range(200)))
    out["edit_ms_p50"], per_s["edit"] = _median_ms(
        lambda i: tools["workspace_edit"]("edit.txt", f"line {100 + i}\n", f"edited {i}\n"),
        min(runs, 100),
    )
    out["list_ms_p50"], per_s["list"] = _median_ms(lambda i: tools["workspace_list"](""), runs)
    if not journal:
        tree = card._session.location.tree
        for n in range(1000):
            directory = tree / "big" / f"d{n // 100}"
            directory.mkdir(parents=True, exist_ok=True)
            body = "".join(f"row {r} of file {n}\n" for r in range(99)) + f"needle {n}\n"
            (directory / f"f{n}.txt").write_text(body)
        few = 5 if quick else 15
        out["grep_ms_1000_files"], per_s["grep"] = _median_ms(
            lambda i: tools["workspace_grep"]("needle", "big"), few
        )
        out["glob_ms_1000_files"], per_s["glob"] = _median_ms(
            lambda i: tools["workspace_glob"]("**/*.txt", "big"), few
        )
        out["grep_all_lines_ms"], _ = _median_ms(lambda i: tools["workspace_grep"]("row", "big"), 3)
    out["exec_true_ms_p50"] = _exec_true(journal, quick, card_class, exec_class)
    out["calls_per_s"] = per_s
    return out


def _exec_true(journal: bool, quick: bool, card_class: Any, exec_class: Any) -> float | None:
    from akgentic.sandbox import SandboxUnavailableError
    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.testing import RecordingObserver

    observer = RecordingObserver(name="@Bench", user_id="bench")
    card = card_class(
        workspace_id="exec-journal" if journal else "exec",
        git_journal=journal,
        workspace_exec=exec_class(backend="bwrap"),
    )
    try:
        ToolFactory([card], observer=observer)
    except SandboxUnavailableError as error:
        print(f"exec skipped: {error}".splitlines()[0], file=sys.stderr)
        return None
    tool = next(t for t in card.get_tools() if t.__name__ == "workspace_exec")
    tool("sh -c true")  # cold start: prepare the backend once
    try:
        ms, _ = _median_ms(lambda i: _ok(tool("sh -c true")), 5 if quick else 20)
    finally:
        card._exec_local.close()
    return ms


def _ok(rendering: str) -> str:
    if "exit_code: 0 (OK)" not in rendering:
        raise RuntimeError(f"exec of true did not succeed: {rendering}")
    return rendering


def bench_workspace(quick: bool = False) -> dict[str, Section]:
    """The ``workspace`` (journal off) and ``workspace_journal`` sections."""
    with tempfile.TemporaryDirectory() as root:
        previous = os.environ.get("AKGENTIC_WORKSPACES_ROOT")
        os.environ["AKGENTIC_WORKSPACES_ROOT"] = root
        try:
            return {
                "workspace": _section(False, quick),
                "workspace_journal": _section(True, quick),
            }
        finally:
            if previous is None:
                os.environ.pop("AKGENTIC_WORKSPACES_ROOT", None)
            else:
                os.environ["AKGENTIC_WORKSPACES_ROOT"] = previous


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    options = parser.parse_args()
    print(json.dumps(bench_workspace(options.quick)))


if __name__ == "__main__":
    main()
