"""Vector layer speed: backends (upsert, query, hybrid, restore, memory) and embedders.

Prints one JSON object::

    {"backends": {"<name>": {"upsert_rows_per_s": N,
                             "query_p50_ms": {"1000": x, "10000": x, "100000": x},
                             "query_p99_ms": {...}, "exact_query_p50_ms": {...},
                             "recall_at_10": {...}, "hybrid_p50_ms_10000": x,
                             "restore_s_10000": x, "mib_per_10000": x,
                             "add_one_ms_10000": x, ...}},
     "embedders": {"<name>": {"texts_per_s_single": x, "texts_per_s_batch": x}}}

* ``upsert_rows_per_s``: one ``add`` of 10,000 rows of 384 dimensions (rows built
  beforehand, as a consumer's batch would be).
* ``query_p50_ms`` / ``query_p99_ms``: top-10 searches of a team-scoped collection
  holding that many rows.
* ``exact_query_p50_ms`` / ``recall_at_10`` (inmemory): the exact float32 scan of the
  same rows with the int8 path off, and the share of its top 10 that the default
  search returns (the int8 path runs from 20,000 rows; it re-scores certified
  candidates exactly, so 1.0 is expected).
* ``hybrid_p50_ms_10000``: the whole hybrid rule at 10,000 rows: embedding the
  query (``hashing``), the over-fetching search and the fusion with 50 keyword keys.
* ``restore_s_10000`` (inmemory): wall time of ``TeamManager.resume_team`` for a
  stopped team whose ``#VectorStore`` holds 10,000 rows (written in batches of 500),
  SQLite log; ``log_bytes_per_add_one`` at 10 and at 10,000 rows shows the log grows
  by the change only.
* ``mib_per_10000``: resident memory (RSS) that 10,000 rows add to a fresh process
  holding the backend, measured in a child process so that earlier runs leave
  nothing behind; it counts native engines (Rust, mapped segment files) too.
  ``traced_mib_per_10000`` is the Python heap part alone (tracemalloc).
* ``add_one_ms_10000``: median time to add one row to a 10,000-row store through the
  path a card uses (the ``#VectorStore`` actor for inmemory, the backend for qdrant).

``qdrant`` is qdrant-client's local ``:memory:`` engine; ``qdrant-edge`` the embedded
engine on a temporary directory (each upsert flushed to disk). ``--quick`` (or
``AKGENTIC_BENCH_QUICK=1``) divides every size by 10 for a fast check; the
defaults are the issue's sizes. Run: ``.venv/bin/python bench/vector.py``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from akgentic.core import ActorSystem
from akgentic.core.proxy import ProxyWrapper
from akgentic.team import SqliteEventStore, TeamCard, TeamManager
from akgentic.team.stores.codec import encode_event
from akgentic.vector import VectorEntry, VectorStoreChange, VectorStoreParam
from akgentic.vector.engine import InMemoryBackend
from akgentic.vector.hybrid import hybrid_search

DIM = 384
TEAM = "bench-team"
SUPPORT = Path(__file__).resolve().parents[1] / "tests" / "vector" / "support"


def plugin(module: str) -> Any:
    """A plugin's module (imported by name: the kernel's type check does not see plugins)."""
    return importlib.import_module(module)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` in milliseconds, rounded."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, round(q * (len(ordered) - 1)))
    return round(ordered[index] * 1000, 3)


def matrix(n: int, seed: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def entries(n: int, seed: int, start: int = 0, with_vectors: bool = True) -> list[VectorEntry]:
    vectors = matrix(n, seed).tolist() if with_vectors else [[] for _ in range(n)]
    return [
        VectorEntry(ref_type="task", ref_id=str(start + i), text=f"task {start + i}", vector=v)
        for i, v in enumerate(vectors)
    ]


def param(backend: str) -> VectorStoreParam:
    return VectorStoreParam(
        backend=backend, dimension=DIM, embedding_provider="hashing", embedding_model="hashing"
    )


def timed_queries(search: Callable[[list[float]], Any], count: int) -> list[float]:
    queries = matrix(count, 99).tolist()
    search(queries[0])  # warm-up
    times = []
    for q in queries:
        start = time.perf_counter()
        search(q)
        times.append(time.perf_counter() - start)
    return times


class HashingQueries:
    """The ``hashing`` embedder at 384 dimensions, imported from its plugin."""

    def __init__(self) -> None:
        self.embedder = plugin("akgentic_embed_local.hashing").HashingEmbedder(dimension=DIM)


# ------------------------------------------------------------------ backends


def fill(backend: Any, n: int, collection: str = "planning") -> None:
    """Put ``n`` rows into ``collection`` in batches (not measured)."""
    for start in range(0, n, 1000):
        size = min(1000, n - start)
        if isinstance(backend, InMemoryBackend):
            backend.add_matrix(collection, entries(size, start, start, False), matrix(size, start))
        else:
            backend.add(collection, entries(size, start, start))


def bench_backend(
    name: str, make: Callable[[], Any], sizes: list[int], queries: dict[int, int]
) -> dict[str, Any]:
    result: dict[str, Any] = {"query_p50_ms": {}, "query_p99_ms": {}}
    upsert_n = sizes[1]
    backend = make()
    backend.create_collection("planning", param(name))
    batch = entries(upsert_n, 1)
    start = time.perf_counter()
    backend.add("planning", batch)
    result["upsert_rows_per_s"] = round(upsert_n / (time.perf_counter() - start))
    del batch
    for n in sizes:
        backend = make()
        backend.create_collection("planning", param(name))
        fill(backend, n)
        times = timed_queries(partial(backend.search, "planning", top_k=10), queries[n])
        result["query_p50_ms"][str(n)] = percentile(times, 0.5)
        result["query_p99_ms"][str(n)] = percentile(times, 0.99)
        if isinstance(backend, InMemoryBackend):
            exact_p50, recall = bench_exact_scan(backend, queries[n])
            result.setdefault("exact_query_p50_ms", {})[str(n)] = exact_p50
            result.setdefault("recall_at_10", {})[str(n)] = recall
        if n == sizes[1]:
            result["hybrid_p50_ms_10000"] = bench_hybrid(backend, queries[n])
            if not isinstance(backend, InMemoryBackend):
                one = entries(1, 5, 10**7)
                adds = []
                for i in range(50):
                    one[0].ref_id = str(10**7 + i)
                    t0 = time.perf_counter()
                    backend.add("planning", one)
                    adds.append(time.perf_counter() - t0)
                result["add_one_ms_10000"] = percentile(adds, 0.5)
        del backend
    result["traced_mib_per_10000"] = memory_per(make, name, sizes[1])
    result["mib_per_10000"] = resident_per(name, sizes[1])
    return result


def bench_exact_scan(backend: InMemoryBackend, count: int) -> tuple[float, float]:
    """p50 of the exact f32 scan, and recall@10 of the default search against it.

    The default search takes the int8 path from ``QUANTISE_FROM_ROWS`` rows on; the
    exact scan is the same store with that path turned off, on the same queries
    ``timed_queries`` sent. Both searches of a query run back to back.
    """
    queries = matrix(count, 99).tolist()
    storage = backend.storage
    default_from = storage.quantise_from
    found: list[set[str]] = []
    truth: list[set[str]] = []
    times = []
    try:
        for q in queries:
            storage.quantise_from = default_from
            found.append({h.ref_id for h in backend.search("planning", q, 10).hits})
            storage.quantise_from = None
            t0 = time.perf_counter()
            hits = backend.search("planning", q, 10).hits
            times.append(time.perf_counter() - t0)
            truth.append({h.ref_id for h in hits})
    finally:
        storage.quantise_from = default_from
    matched = sum(len(f & t) for f, t in zip(found, truth, strict=True))
    return percentile(times, 0.5), round(matched / sum(map(len, truth)), 4)


def bench_hybrid(backend: Any, count: int) -> float:
    embedder = HashingQueries().embedder
    keywords = [str(i) for i in range(0, 500, 10)]
    words = ["deploy", "service", "billing", "report", "review", "plan", "incident"]
    rng = random.Random(5)
    texts = [" ".join(rng.choices(words, k=4)) for _ in range(count)]
    times = []
    for text in texts:
        t0 = time.perf_counter()
        hybrid_search(keywords, backend, embedder, "planning", text, 10)
        times.append(time.perf_counter() - t0)
    return percentile(times, 0.5)


def memory_per(make: Callable[[], Any], name: str, n: int) -> float:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    backend = make()
    backend.create_collection("planning", param(name))
    fill(backend, n)
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del backend
    return round(used / 2**20 * (10_000 / n), 2)


def resident_mib() -> float:
    """This process's resident set, in MiB (Linux ``/proc``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def make_named(name: str, root: Path) -> Any:
    """A fresh backend of ``name`` as the bench builds it (qdrant-edge under ``root``)."""
    if name == "inmemory":
        return InMemoryBackend(team_id=TEAM)
    if name == "qdrant":
        client = plugin("qdrant_client").QdrantClient(location=":memory:")
        return plugin("akgentic_qdrant.backend").QdrantBackend(client, TEAM, lock=threading.RLock())
    if name == "qdrant-edge":
        edge_module = plugin("akgentic_qdrant.edge")
        return edge_module.EdgeBackend(edge_module.EdgeStorage(root), TEAM)
    raise ValueError(f"no bench backend named {name!r}")


def resident_child(name: str, n: int) -> None:
    """In a child process: print the RSS (MiB) that ``n`` rows add, scaled to 10,000."""
    import gc

    with tempfile.TemporaryDirectory() as tmp:
        backend = make_named(name, Path(tmp))
        backend.create_collection("planning", param(name))
        backend.create_collection("warm-up", param(name))
        fill(backend, 1000, "warm-up")  # loads every code path a fill uses
        gc.collect()
        before = resident_mib()
        fill(backend, n)
        gc.collect()
        used = resident_mib() - before
        print(json.dumps(round(used * 10_000 / n, 2)))


def resident_per(name: str, n: int) -> float | None:
    """RSS per 10,000 rows of ``name``, measured in a fresh child process."""
    import subprocess

    out = subprocess.run(
        [sys.executable, __file__, "--resident-of", name, "--rows", str(n)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        print(f"resident memory of {name} not measured: {out.stderr[-500:]}", file=sys.stderr)
        return None
    value: float = json.loads(out.stdout.strip().splitlines()[-1])
    return value


# ------------------------------------------------------- the store in a team


@contextmanager
def team_manager(root: Path) -> Iterator[tuple[TeamManager, SqliteEventStore]]:
    system = ActorSystem()
    store = SqliteEventStore(root / "bench.db")
    manager = TeamManager(system, store)
    try:
        yield manager, store
    finally:
        manager.stop_all()
        store.close()
        system.shutdown(timeout=10)


def store_card() -> TeamCard:
    def member(name: str, store: Any) -> dict[str, Any]:
        return {
            "card": {
                "agent_class": "vector_test_agents.StoreUser",
                "description": name,
                "config": {
                    "__model__": "vector_test_agents.StoreUserConfig",
                    "name": name,
                    "role": "User",
                    "vector_store": store,
                },
            }
        }

    store = param("inmemory").model_dump(exclude={"backend_declared", "embedding_declared"})
    return TeamCard.model_validate(
        {
            "name": "vector-bench",
            "entry_point": member("@Entry", False),
            "members": [member("@User", store)],
            "message_types": ["akgentic.core.messages.message.UserMessage"],
        }
    )


def store_proxy(runtime: Any) -> Any:
    address = next(m for m in runtime.members if m.name == "#VectorStore")
    return ProxyWrapper(address, timeout=120)


def change_sizes(store: SqliteEventStore, team_id: Any) -> list[int]:
    return [
        len(encode_event(e))
        for e in store.load_events(team_id)
        if isinstance(getattr(e.event, "event", None), VectorStoreChange)
    ]


def wait_for(predicate: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    event = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        event.wait(0.01)


def bench_team_store(n: int) -> dict[str, Any]:
    """add_one_ms, restore_s and log bytes of the inmemory store in a real team."""
    sys.path.insert(0, str(SUPPORT))
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, team_manager(Path(tmp)) as (manager, store):
        runtime = manager.create_team(store_card())
        proxy = store_proxy(runtime)
        # @User creates the collection in its on_start, which may still be running.
        wait_for(lambda: "planning" in proxy.list_collections())
        proxy.add("planning", entries(10, 0))
        wait_for(lambda: len(change_sizes(store, runtime.id)) == 2)
        proxy.add("planning", entries(1, 1, 10**6))
        wait_for(lambda: len(change_sizes(store, runtime.id)) == 3)
        small = change_sizes(store, runtime.id)[-1]
        for start in range(10, n, 500):
            proxy.add("planning", entries(min(500, n - start), start, start))
        adds = []
        one = entries(201, 7, 2 * 10**6)
        for i in range(200):
            t0 = time.perf_counter()
            proxy.add("planning", [one[i]])
            adds.append(time.perf_counter() - t0)
        result["add_one_ms_10000"] = percentile(adds, 0.5)
        proxy.add("planning", [one[200]])
        # create + 10 rows + 1 row + the batches + 200 single rows + this one
        expected = 3 + len(range(10, n, 500)) + 200 + 1
        wait_for(lambda: len(change_sizes(store, runtime.id)) == expected)
        large = change_sizes(store, runtime.id)[-1]
        result["log_bytes_per_add_one"] = {"10": small, str(n): large}
        probe = matrix(1, 4242)[0].tolist()
        before = [(h.ref_id, h.score) for h in proxy.search("planning", probe, 10).hits]
        manager.stop_team(runtime.id)
        t0 = time.perf_counter()
        resumed = manager.resume_team(runtime.id)
        result["restore_s_10000"] = round(time.perf_counter() - t0, 3)
        after = [
            (h.ref_id, h.score) for h in store_proxy(resumed).search("planning", probe, 10).hits
        ]
        result["restore_same_results"] = after == before
    return result


# ----------------------------------------------------------------- embedders


def bench_embedder(embedder: Any, single: int, batch: int) -> dict[str, float]:
    rng = random.Random(3)
    words = "the quick brown fox jumps over a lazy dog while planning the release".split()  # noqa: SIM905 - a sentence reads better than a list of 13 words
    texts = [" ".join(rng.choices(words, k=12)) for _ in range(max(single, batch))]
    embedder.embed(texts[:2])  # warm-up (loads a model)
    t0 = time.perf_counter()
    for text in texts[:single]:
        embedder.embed([text])
    single_rate = single / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(0, batch, 64):
        embedder.embed(texts[i : i + 64])
    batch_rate = batch / (time.perf_counter() - t0)
    return {"texts_per_s_single": round(single_rate, 1), "texts_per_s_batch": round(batch_rate, 1)}


def embedders(scale: int, wanted: set[str] | None = None) -> dict[str, Any]:
    """Texts per second of ``hashing`` and ``minilm`` (when installed), or of ``wanted``."""
    out: dict[str, Any] = {}
    try:
        hashing = plugin("akgentic_embed_local.hashing")
        minilm = plugin("akgentic_embed_local.minilm")
    except ImportError:
        print("akgentic-embed-local not installed: embedders skipped", file=sys.stderr)
        return out
    if wanted is None or "hashing" in wanted:
        embedder = hashing.HashingEmbedder(dimension=DIM)
        out["hashing"] = bench_embedder(embedder, 2000 // scale, 2000 // scale)
    if wanted is not None and "minilm" not in wanted:
        return out
    reason = minilm.minilm_unavailable()
    if reason is None:
        out["minilm"] = bench_embedder(minilm.MiniLMEmbedder(), 100 // scale, 512 // scale)
    else:
        print(f"minilm skipped: {reason}", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes divided by 10")
    parser.add_argument(
        "--backends", default="inmemory,qdrant,qdrant-edge", help="comma-separated subset"
    )
    parser.add_argument("--no-embedders", action="store_true", help="skip the embedders")
    parser.add_argument("--embedders", help="comma-separated subset of hashing,minilm")
    parser.add_argument("--resident-of", help=argparse.SUPPRESS)  # the child of resident_per
    parser.add_argument("--rows", type=int, default=10_000, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resident_of:
        resident_child(args.resident_of, args.rows)
        return
    wanted = set(args.backends.split(","))
    scale = 10 if args.quick or os.environ.get("AKGENTIC_BENCH_QUICK") == "1" else 1
    sizes = [1000 // scale, 10_000 // scale, 100_000 // scale]
    report: dict[str, Any] = {"dimension": DIM, "sizes": sizes, "backends": {}, "embedders": {}}

    if "inmemory" in wanted:
        inmemory = bench_backend(
            "inmemory",
            lambda: InMemoryBackend(team_id=TEAM),
            sizes,
            {sizes[0]: 500, sizes[1]: 500, sizes[2]: 200},
        )
        inmemory.update(bench_team_store(sizes[1]))
        report["backends"]["inmemory"] = inmemory
    if "qdrant" in wanted:
        bench_qdrant(report, sizes)
    if "qdrant-edge" in wanted:
        bench_edge(report, sizes)
    if not args.no_embedders:
        report["embedders"] = embedders(
            scale, set(args.embedders.split(",")) if args.embedders else None
        )
    check_report(report)
    print(json.dumps(report))


#: The keys the issue's checks read, per backend and per embedder.
BACKEND_KEYS = (
    "upsert_rows_per_s",
    "query_p50_ms",
    "query_p99_ms",
    "hybrid_p50_ms_10000",
    "restore_s_10000",
    "mib_per_10000",
    "add_one_ms_10000",
)
EMBEDDER_KEYS = ("texts_per_s_single", "texts_per_s_batch")


def check_report(report: dict[str, Any]) -> None:
    """Refuse to print a report missing a key the issue names, or of the wrong shape.

    ``restore_s_10000`` may be None only for a backend whose rows do not live in a
    team's log (the clusters and qdrant-edge keep them in their own storage).
    """
    sizes = [str(n) for n in report["sizes"]]
    problems = []
    for name, figures in report["backends"].items():
        for key in BACKEND_KEYS:
            if key not in figures:
                problems.append(f"{name}: no {key}")
        for key in ("query_p50_ms", "query_p99_ms"):
            if sorted(figures.get(key, {}), key=int) != sizes:
                problems.append(f"{name}: {key} is not keyed by {sizes}")
        for key in BACKEND_KEYS:
            value = figures.get(key)
            if key.startswith("query_") or (key == "restore_s_10000" and name != "inmemory"):
                continue
            if not isinstance(value, int | float) or value < 0:
                problems.append(f"{name}: {key} is {value!r}, not a number")
    for name, figures in report["embedders"].items():
        for key in EMBEDDER_KEYS:
            if not isinstance(figures.get(key), int | float):
                problems.append(f"{name}: {key} is {figures.get(key)!r}")
    if problems:
        raise SystemExit("bench report incomplete: " + "; ".join(problems))


def bench_qdrant(report: dict[str, Any], sizes: list[int]) -> None:
    """The ``qdrant`` backend on qdrant-client's local ``:memory:`` engine."""
    try:
        backend_module = plugin("akgentic_qdrant.backend")
        client_module = plugin("qdrant_client")
    except ImportError:
        print("akgentic-qdrant not installed: qdrant skipped", file=sys.stderr)
    else:

        def make_qdrant() -> Any:
            client = client_module.QdrantClient(location=":memory:")
            return backend_module.QdrantBackend(client, TEAM, lock=threading.RLock())

        qdrant = bench_backend(
            "qdrant", make_qdrant, sizes, {sizes[0]: 100, sizes[1]: 50, sizes[2]: 10}
        )
        qdrant["restore_s_10000"] = None  # its rows live in the engine, not in a team's log
        report["backends"]["qdrant"] = qdrant


def bench_edge(report: dict[str, Any], sizes: list[int]) -> None:
    """The ``qdrant-edge`` backend on a temporary directory."""
    try:
        edge_module = plugin("akgentic_qdrant.edge")
    except ImportError:
        print("qdrant-edge-py not installed: qdrant-edge skipped", file=sys.stderr)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            roots = iter(range(1000))

            def make_edge() -> Any:
                storage = edge_module.EdgeStorage(Path(tmp) / str(next(roots)))
                return edge_module.EdgeBackend(storage, TEAM)

            edge = bench_backend(
                "qdrant-edge", make_edge, sizes, {sizes[0]: 200, sizes[1]: 200, sizes[2]: 50}
            )
        edge["restore_s_10000"] = None  # persisted by the engine itself
        report["backends"]["qdrant-edge"] = edge


if __name__ == "__main__":
    main()
