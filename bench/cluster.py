"""Scale-out speed: teams on 3 NATS workers with PostgreSQL as the fence.

Prints one JSON object with, among others, the keys checks read::

    {"workers": 3, "teams": 300, "place_s_300": ..., "round_trip_ms": {"p50", "p90", "p99"},
     "requests_per_s_32": ..., "events_per_s_32": ..., "per_team": {"rss_kib", "threads"},
     "failover_first_back_s": ..., "failover_median_back_s": ..., "failover_all_back_s": ...,
     "failover_teams_moved": N, "drain_all_back_s": ..., "drain_teams_moved": N,
     "acked_checked": N, "acked_missing": 0, "acked_by_fenced": 0,
     "gaps": 0, "duplicates": 0, "load_average": [...]}

``place_s_300``: ``create`` of 300 teams, 32 at a time, until each runs.
``round_trip_ms``: durable-ack ``send`` one at a time. ``requests_per_s_32``:
sends with 32 in flight (``events_per_s_32``: events stored meanwhile).
``per_team``: RSS and threads a worker gains per team it holds. Failover:
SIGKILL of the worker holding most teams, then every one of its teams is asked
(in parallel, retrying) until it answers; first/median/all back count from the
kill. Drain: SIGTERM of another worker, all back from the signal.
``acked_missing``: acknowledged requests whose message is not in the log at the
acknowledged sequence; ``acked_by_fenced``: acknowledgements from a worker
after it was killed or drained; ``gaps``/``duplicates``: teams whose log is not
1..N, inbound keys delivered twice.

Needs NATS (``--nats``, default ``nats://127.0.0.1:4222``) and PostgreSQL
(``--postgres``, default ``$AKGENTIC_TEST_POSTGRES_URL``); names are prefixed
per run and removed afterwards. Run: ``.venv/bin/python bench/cluster.py [--teams 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from akgentic.cluster import Ack, connect
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team.urls import open_event_store
from akgentic.testing.cluster_team import quiet_team_card
from akgentic.testing.runtime_contract import check_acks_in_log


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _proc_status(pid: int) -> tuple[int, int]:
    rss = threads = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss, threads


class Bench:
    def __init__(self, nats_url: str, pg_url: str, lease: float, logs: Path) -> None:
        self.prefix = f"akgb{uuid4().hex[:10]}"
        self.cluster = f"{nats_url}?prefix={self.prefix}&lease={lease:g}"
        self.schema = f"akb_{uuid4().hex[:12]}"
        sep = "&" if "?" in pg_url else "?"
        self.pg_server = pg_url
        self.store_url = f"{pg_url}{sep}schema={self.schema}&pool_max_size=6"
        self.logs = logs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def setup(self) -> None:
        from akgentic.plugins import current_registry

        init = current_registry().event_store_for_scheme("postgresql").init
        assert init is not None
        init(self.store_url)
        runtime = current_registry().runtime_for_scheme("nats")
        assert runtime.init is not None
        runtime.init(self.cluster)

    def teardown(self) -> None:
        import importlib

        import nats
        import psycopg

        # Imported by name: the plugin is not on the type checker's path for bench/.
        remove_cluster = importlib.import_module("akgentic_nats.setup").remove_cluster
        parse_nats_url = importlib.import_module("akgentic_nats.target").parse_nats_url

        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(30)
        target = parse_nats_url(self.cluster)

        async def remove() -> None:
            nc = await nats.connect(list(target.servers))
            await remove_cluster(nc.jetstream(), target)
            await nc.close()

        asyncio.run(remove())
        with psycopg.connect(self.pg_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')

    def start(self, name: str) -> None:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - kept by the child
        self.procs[name] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "akgentic.cli",
                "worker",
                "--cluster",
                self.cluster,
                "--store",
                self.store_url,
                "--capacity",
                "1000",
                "--name",
                name,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def _until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            return False
        pause.wait(0.1)
    return True


def _back_times(
    client: Any, teams: list[UUID], start: float, keys: list[str]
) -> tuple[list[float], list[Ack]]:
    times: list[float] = []
    acks: list[Ack] = []
    lock = threading.Lock()

    def ask(team_id: UUID) -> None:
        key = f"back-{uuid4().hex}"
        ack = client.send(team_id, "back?", key=key, timeout=120)
        with lock:
            times.append(time.monotonic() - start)
            acks.append(ack)
            keys.append(key)

    with ThreadPoolExecutor(64) as pool:
        list(pool.map(ask, teams))
    return sorted(times), acks


def run(args: argparse.Namespace) -> dict[str, Any]:
    logs = Path(tempfile.mkdtemp(prefix="akgentic-bench-cluster-"))
    bench = Bench(args.nats, args.postgres, args.lease, logs)
    bench.setup()
    result: dict[str, Any] = {"workers": 3, "teams": args.teams, "lease_s": args.lease}
    try:
        for name in ("w1", "w2", "w3"):
            bench.start(name)
        client = connect(bench.cluster)
        store = open_event_store(bench.store_url)
        # Warm-up: every worker up and serving.
        client.create(quiet_team_card())
        idle = {n: _proc_status(p.pid) for n, p in bench.procs.items()}

        started = time.monotonic()
        with ThreadPoolExecutor(32) as pool:
            teams = list(pool.map(lambda _: client.create(quiet_team_card()), range(args.teams)))
        result[f"place_s_{args.teams}"] = round(time.monotonic() - started, 3)
        if args.teams != 300:
            result["place_s_300"] = None

        where = {t: client.where(t).worker for t in teams}
        counts = {n: sum(1 for w in where.values() if w == n) for n in bench.procs}
        result["teams_per_worker"] = counts
        per_rss, per_threads = [], []
        for name, proc in bench.procs.items():
            rss, threads = _proc_status(proc.pid)
            if counts[name]:
                per_rss.append((rss - idle[name][0]) / counts[name])
                per_threads.append((threads - idle[name][1]) / counts[name])
        result["per_team"] = {
            "rss_kib": round(statistics.mean(per_rss), 1),
            "threads": round(statistics.mean(per_threads), 2),
        }

        acks: list[Ack] = []
        rtts: list[float] = []
        for i in range(args.round_trips):
            t0 = time.perf_counter()
            acks.append(client.send(teams[i % len(teams)], "ping", key=f"rt-{i}"))
            rtts.append((time.perf_counter() - t0) * 1000)
        result["round_trip_ms"] = {
            "p50": round(_percentile(rtts, 0.5), 2),
            "p90": round(_percentile(rtts, 0.9), 2),
            "p99": round(_percentile(rtts, 0.99), 2),
        }

        sample = teams[:64]
        before = sum(store.get_max_sequence(t) for t in sample)
        lock = threading.Lock()
        t0 = time.monotonic()

        def burst(i: int) -> None:
            ack = client.send(sample[i % len(sample)], "load", key=f"load-{i}")
            with lock:
                acks.append(ack)

        with ThreadPoolExecutor(32) as pool:
            list(pool.map(burst, range(args.requests)))
        spent = time.monotonic() - t0
        after = sum(store.get_max_sequence(t) for t in sample)
        result["requests_per_s_32"] = round(args.requests / spent, 1)
        result["events_per_s_32"] = round((after - before) / spent, 1)

        # Failover: SIGKILL of the busiest worker.
        victim = max(counts, key=lambda n: counts[n])
        moved = [t for t, w in where.items() if w == victim]
        killed_at = time.monotonic()
        bench.procs[victim].kill()
        keys: list[str] = []
        times, back = _back_times(client, moved, killed_at, keys)
        acks.extend(back)
        result["failover_teams_moved"] = len(moved)
        result["failover_first_back_s"] = round(times[0], 3)
        result["failover_median_back_s"] = round(statistics.median(times), 3)
        result["failover_all_back_s"] = round(times[-1], 3)
        fenced = [a for a in back if a.worker == victim]

        # Drain: SIGTERM of another worker (teams settle on it first).
        survivors = [n for n in bench.procs if n != victim]
        where = {t: client.where(t).worker for t in teams}
        drained = max(survivors, key=lambda n: sum(1 for w in where.values() if w == n))
        handed = [t for t, w in where.items() if w == drained]
        drained_at = time.monotonic()
        bench.procs[drained].send_signal(signal.SIGTERM)
        times, back = _back_times(client, handed, drained_at, keys)
        acks.extend(back)
        fenced += [a for a in back if a.worker == drained]
        result["drain_teams_moved"] = len(handed)
        result["drain_all_back_s"] = round(times[-1], 3)
        result["drain_median_back_s"] = round(statistics.median(times), 3)
        result["drain_p90_back_s"] = round(_percentile(times, 0.9), 3)

        result["acked_checked"] = len(acks)
        result["acked_missing"] = len(check_acks_in_log(store, acks))
        result["acked_by_fenced"] = len(fenced)
        gaps = duplicates = 0
        for team_id in teams:
            log = store.load_events(team_id)
            if [e.sequence for e in log] != list(range(1, len(log) + 1)):
                gaps += 1
            ids = [e.event.message.id for e in log if isinstance(e.event, SentMessage)]
            inbound = [i for i in ids if i.version == 5]
            duplicates += len(inbound) - len(set(inbound))
        result["gaps"] = gaps
        result["duplicates"] = duplicates
        client.close()
        store.close()
    finally:
        bench.teardown()
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    result["logs"] = str(logs)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--nats", default=os.environ.get("AKGENTIC_TEST_NATS_URL", "nats://127.0.0.1:4222")
    )
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "AKGENTIC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
        ),
    )
    parser.add_argument("--teams", type=int, default=300)
    parser.add_argument("--lease", type=float, default=4.0)
    parser.add_argument("--round-trips", type=int, default=200)
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
