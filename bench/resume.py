"""Resume time against log length, with checkpoints and without.

Prints one JSON object::

    {"resume_s_100000_events": ..., "resume_s_100000_events_no_checkpoint": ...,
     "resume_s_by_events": {"1000": ..., "10000": ..., "100000": ...},
     "events_read_100000": ..., "activation_ms_p50": ..., "activation_ms_p99": ...,
     "checkpoint_every": 1000, "targets": {...}}

The logs are written straight into a SQLite store, copies of the events a real
echo team produced (as ``bench/team.py`` does), with a checkpoint every
``checkpoint_every`` events made by the same :class:`~akgentic.team.checkpoint.Checkpointer`
a running team's persistence uses, and a tail of half a checkpoint interval
after the last one (what a team killed between two checkpoints leaves).

``resume_s_100000_events``: ``TeamManager.resume_team`` of a stopped
100,000-event team, median of ``--runs``. Target: at most 0.3 s.
``resume_s_100000_events_no_checkpoint``: the same log written without
checkpoints, resumed by a manager that writes none (the whole log replayed:
the figure before checkpoints), median of ``--baseline-runs``.
``events_read_100000``: events the checkpointed resume read from the store.
``activation_ms_p50`` / ``p99``: ``resume_team`` of a 1,000-event team whose log
ends with a checkpoint (what passivation leaves), over ``--activations``
resumes. Target: at most 20 / 100 ms. (The activation on demand of issue #32
item 1 adds its own path on top; this is the store-and-rebuild part.)

Run: ``.venv/bin/python bench/resume.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from akgentic.core import ActorSystem
from akgentic.team import (
    EventStore,
    PersistedEvent,
    Process,
    TeamManager,
    TeamStatus,
    open_event_store,
)
from akgentic.team.checkpoint import CHECKPOINT_EVERY, Checkpointer, load_restore_point
from akgentic.team.store import BatchEventStore


def write_log(
    store: EventStore,
    process: Process,
    sample: list[PersistedEvent],
    size: int,
    *,
    every: int,
    tail: int,
) -> UUID:
    """A stopped team of ``size`` events cloned from ``sample``, checkpointed every ``every``.

    The last checkpoint is followed by ``tail`` events (``every=0``: no checkpoint).
    """
    team_id = uuid4()
    head = [e for e in sample if type(e.event).__name__ == "StartMessage"]
    body = [e for e in sample if e not in head and type(e.event).__name__ != "EventMessage"]
    checkpointer = Checkpointer(team_id, every=0)
    last_checkpoint = size - tail
    events: list[PersistedEvent] = []
    sequence = made = 0
    while made < size:
        source = head[made] if made < len(head) else body[(made - len(head)) % len(body)]
        made += 1
        sequence += 1
        event = source.model_copy(update={"team_id": team_id, "sequence": sequence})
        events.append(event)
        checkpointer.observe(event)
        if every and made <= last_checkpoint and (last_checkpoint - made) % every == 0:
            sequence += 1
            checkpoint = checkpointer.make()
            assert checkpoint is not None
            stored = PersistedEvent(team_id=team_id, sequence=sequence, event=checkpoint)
            events.append(stored)
            checkpointer.observe(stored)
    assert isinstance(store, BatchEventStore)
    for start in range(0, len(events), 5000):
        store.save_events(events[start : start + 5000])
    store.save_team(process.model_copy(update={"team_id": team_id, "status": TeamStatus.STOPPED}))
    return team_id


def timed_resumes(
    manager: TeamManager, team_id: UUID, runs: int, *, passivate: bool = False
) -> list[float]:
    """Resume times; with ``passivate``, each stop is followed by a checkpoint (untimed)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        manager.resume_team(team_id)
        times.append(time.perf_counter() - started)
        manager.stop_team(team_id)
        if passivate:
            manager.checkpoint_team(team_id)
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--activations", type=int, default=100)
    parser.add_argument("--every", type=int, default=CHECKPOINT_EVERY)
    args = parser.parse_args()
    # bench/team.py's echo team makes the sample log; its agent is imported from there.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    team: Any = importlib.import_module("team")
    every = args.every
    result: dict[str, Any] = {"checkpoint_every": every}
    with tempfile.TemporaryDirectory(prefix="akgentic-bench-resume-") as tmp:
        store = open_event_store(f"sqlite:///{tmp}/bench.db")
        system = ActorSystem()
        try:
            process, sample = team.template(store, system)
            manager = TeamManager(system, store, checkpoint_every=every)
            by_size: dict[str, float] = {}
            for size in (1_000, 10_000, 100_000):
                team_id = write_log(store, process, sample, size, every=every, tail=every // 2)
                by_size[str(size)] = round(
                    statistics.median(timed_resumes(manager, team_id, args.runs)), 4
                )
                if size == 100_000:
                    result["events_read_100000"] = load_restore_point(store, team_id).read
            result["resume_s_by_events"] = by_size
            result["resume_s_100000_events"] = by_size["100000"]

            plain_manager = TeamManager(system, store, checkpoint_every=0)
            plain = write_log(store, process, sample, 100_000, every=0, tail=0)
            baseline = timed_resumes(plain_manager, plain, args.baseline_runs)
            result["resume_s_100000_events_no_checkpoint"] = round(statistics.median(baseline), 3)

            passivated = write_log(store, process, sample, 1_000, every=every, tail=0)
            manager.checkpoint_team(passivated)  # the log ends with one, as passivation leaves it
            times = timed_resumes(manager, passivated, args.activations, passivate=True)
            result["activation_ms_p50"] = round(1000 * percentile(times, 0.5), 2)
            result["activation_ms_p99"] = round(1000 * percentile(times, 0.99), 2)
        finally:
            system.shutdown(timeout=30)
            store.close()
    result["targets"] = {
        "resume_s_100000_events": result["resume_s_100000_events"] <= 0.3,
        "activation_ms_p50": result["activation_ms_p50"] <= 20,
        "activation_ms_p99": result["activation_ms_p99"] <= 100,
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
