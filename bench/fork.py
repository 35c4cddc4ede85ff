"""Time travel speed: forking a team's log, forking a workspace tree, resuming a fork.

Prints one JSON object::

    {"fork_s_10000": ..., "fork_workspace_s_1000_files": ...,
     "resume_after_fork_s_10000": ..., "resume_plain_s_5000": ..., "resume_ratio": ...,
     "targets": {...}}

``fork_s_10000``: ``TeamManager.fork_team`` of a stopped 10,000-event team at its
middle (event 5,000) on SQLite, the median of ``--runs`` forks. The log is written
straight into the store, copies of the events a real echo team produced (as
``bench/team.py`` does). Target: at most 0.5 s.

``fork_workspace_s_1000_files``: the workspace part of a fork of a tree of 1,000
files with its journal on (finding the commit at the fork point, cloning the
journal, checking the tree out, publishing both), the median of ``--runs``.
Target: at most 1 s.

``resume_after_fork_s_10000``: ``resume_team`` of that fork (5,000 events), against
``resume_plain_s_5000``, the resume of a plain team whose log is the same 5,000
events; ``resume_ratio`` is the first over the second (medians of ``--runs``
each). Target: at most 1.2.

Run: ``.venv/bin/python bench/fork.py [--runs 5]``.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, open_event_store

SIZE = 10_000
FILES = 1_000


def bench_log(tmp: Path, runs: int) -> dict[str, float]:
    # bench/team.py writes its logs the same way; its echo agent is imported from there.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    team: Any = importlib.import_module("team")
    template, write_log = team.template, team.write_log

    store = open_event_store(f"sqlite:///{tmp}/bench.db")
    system = ActorSystem()
    try:
        process, sample = template(store, system)
        manager = TeamManager(system, store)
        parent = write_log(store, process, sample, SIZE)
        plain = write_log(store, process, sample, SIZE // 2)
        forks, resumed, resumed_plain = [], [], []
        for _ in range(runs):
            started = time.perf_counter()
            child = manager.fork_team(parent, SIZE // 2).team_id
            forks.append(time.perf_counter() - started)
            started = time.perf_counter()
            manager.resume_team(child)
            resumed.append(time.perf_counter() - started)
            manager.stop_team(child)
            started = time.perf_counter()
            manager.resume_team(plain)
            resumed_plain.append(time.perf_counter() - started)
            manager.stop_team(plain)
            manager.delete_team(child)
        after, before = statistics.median(resumed), statistics.median(resumed_plain)
        return {
            "fork_s_10000": round(statistics.median(forks), 3),
            "resume_after_fork_s_10000": round(after, 3),
            "resume_plain_s_5000": round(before, 3),
            "resume_ratio": round(after / before, 3),
        }
    finally:
        system.shutdown(timeout=30)
        store.close()


def bench_workspace(tmp: Path, runs: int) -> float:
    # Plugins are imported by name: editable installs hide them from mypy.
    fork: Any = importlib.import_module("akgentic_workspace.fork")
    journal_module: Any = importlib.import_module("akgentic_workspace.journal")
    locks: Any = importlib.import_module("akgentic_workspace.locks")
    paths: Any = importlib.import_module("akgentic_workspace.paths")

    root = tmp / "workspaces"
    parent = paths.WorkspaceLocation(root, "bench", "_team", str(uuid4()))
    parent.tree.mkdir(parents=True)
    for number in range(FILES):
        folder = parent.tree / f"dir{number % 20:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"file{number:04d}.py").write_text(f"print({number})\n" * 20)
    journal = journal_module.Journal(parent, locks.MetaDir(parent.meta_dir), requested=True)
    assert journal.enabled, "git is needed for the workspace figure"
    journal.commit_out_of_band()
    at_ns = fork.nanoseconds(datetime.now(UTC))
    times = []
    for _ in range(runs):
        child = paths.WorkspaceLocation(root, "bench", "_team", str(uuid4()))
        started = time.perf_counter()
        commit = fork.commit_at(parent.git_dir, at_ns, parent.relative)
        step = fork.WorkspaceFork(parent, child, commit)
        step.prepare()
        step.publish()
        times.append(time.perf_counter() - started)
        assert len(list(child.tree.rglob("*.py"))) == FILES
    return round(statistics.median(times), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="akgentic-bench-fork-") as tmp:
        os.environ["AKGENTIC_WORKSPACES_ROOT"] = str(Path(tmp) / "workspaces")
        result: dict[str, object] = dict(bench_log(Path(tmp), args.runs))
        result["fork_workspace_s_1000_files"] = bench_workspace(Path(tmp), args.runs)
    result["targets"] = {
        "fork_s_10000": result["fork_s_10000"] <= 0.5,  # type: ignore[operator]
        "fork_workspace_s_1000_files": result["fork_workspace_s_1000_files"] <= 1.0,  # type: ignore[operator]
        "resume_ratio": result["resume_ratio"] <= 1.2,  # type: ignore[operator]
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
