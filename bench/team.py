"""Team persistence speed: durable appends per second and resume time by log size.

Prints one JSON object::

    {"stores": {"<scheme>": {"append_per_s": ..., "resume_s": {"1000": ..., ...},
                             "end_to_end": {"messages": N, "events_per_s": ...,
                                            "delivery_msgs_per_s": ...,
                                            "lag_ms": {"p50": ..., "p99": ...}, ...}}}}

``append_per_s``: events pushed through a PersistenceSubscriber (batched, the
default) until the store acknowledged them all, per second. ``resume_s``: wall
time of ``TeamManager.resume_team`` for a stopped team whose log holds that many
events. The logs are written straight into the store (copies of the events a
real echo team produced), which is quicker than running a team for 50k
messages; the resume itself is the real thing.

``end_to_end``: a team created by a ``TeamManager`` on the store, with one echo
member, receives N messages through ``TeamRuntime.send`` as fast as the calls
return. Each message makes three events (sent, received, processed).
``delivery_msgs_per_s`` is N over the time until the echo member had them all,
``events_per_s`` the events over the time until the store acknowledged them all
(durable), and ``lag_ms`` the age of the oldest message delivered but not yet
durable, sampled every few milliseconds during the run (0 when persistence has
caught up). ``send_s``, ``delivery_s`` and ``durable_s`` are the raw times.
Those are the figures of the team as ``TeamManager`` builds it, whose sends wait
while the record lags (its ``SendGate``); ``end_to_end.unthrottled`` repeats the
run on the same team without the gate: delivery at the kernel's own pace, with
persistence trailing behind it.

Besides the built-in stores (``sqlite``, ``yaml``), the server-backed stores are
measured when a server is given and their plugin is installed, each in a schema
or database of its own that is dropped afterwards:

* ``postgresql``: ``--postgres URL`` (default ``$AKGENTIC_BENCH_POSTGRES_URL``,
  else ``$AKGENTIC_TEST_POSTGRES_URL``, else ``postgresql://postgres@127.0.0.1:5432/test``;
  ``--postgres none`` skips it, and so does an unreachable server, said on stderr);
* ``mongodb``: ``--mongo URL`` (default ``$AKGENTIC_BENCH_MONGO_URL``, else
  ``$AKGENTIC_TEST_MONGO_URL``; skipped when neither is set).

Run: ``.venv/bin/python bench/team.py [--store URL] [--sizes 1000,10000,50000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID, uuid4

from akgentic.core import ActorSystem, BaseConfig, BaseState
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import AgentCard
from akgentic.core.messages.message import UserMessage
from akgentic.team import (
    EventStore,
    PersistedEvent,
    PersistenceSubscriber,
    Process,
    TeamCard,
    TeamCardMember,
    TeamManager,
    TeamRuntime,
    TeamStatus,
    open_event_store,
)
from akgentic.team.store import BatchEventStore

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
#: Gives a store URL on fresh storage of a server (None when unusable) and cleans up.
ServerContext = Callable[[str], AbstractContextManager[str | None]]


class Arrivals:
    """Delivery times of the messages the echo members receive (one run at a time)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.expected = 0
        self.complete = threading.Event()

    def reset(self, expected: int) -> None:
        self.times = []
        self.expected = expected
        self.complete.clear()

    def arrived(self) -> None:
        times = self.times
        times.append(time.perf_counter())
        if len(times) == self.expected:
            self.complete.set()


ARRIVALS = Arrivals()


class BenchEcho(Akgent[BaseConfig, BaseState]):
    """Notes the arrival and does nothing else (the bench measures the team layer)."""

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        ARRIVALS.arrived()


def bench_card() -> TeamCard:
    def card(name: str) -> AgentCard:
        return AgentCard(
            agent_class=BenchEcho,
            description=name,
            config=BaseConfig(name=name, role=name.strip("@")),
        )

    return TeamCard(
        name="bench",
        entry_point=TeamCardMember(card=card("@Entry")),
        members=[TeamCardMember(card=card("@Echo"))],
        message_types=[UserMessage],
    )


def template(store: EventStore, system: ActorSystem) -> tuple[Process, list[PersistedEvent]]:
    """A real team's log: its starts, then the events of one message, repeated later."""
    manager = TeamManager(system, store)
    runtime = manager.create_team(bench_card())
    for i in range(3):
        runtime.send(f"message {i}")
    runtime.wait_idle(30)
    manager.stop_team(runtime.id)
    process = manager.get_team(runtime.id)
    assert process is not None
    return process, store.load_events(runtime.id)


def write_log(store: EventStore, process: Process, sample: list[PersistedEvent], size: int) -> UUID:
    """A stopped team whose log holds ``size`` events cloned from ``sample``."""
    team_id = uuid4()
    head = [e for e in sample if type(e.event).__name__ == "StartMessage"]
    body = [e for e in sample if e not in head and type(e.event).__name__ != "EventMessage"]
    events: list[PersistedEvent] = []
    sequence = 0
    while sequence < size:
        if sequence < len(head):
            source = head[sequence]
        else:
            source = body[(sequence - len(head)) % len(body)]
        sequence += 1
        events.append(source.model_copy(update={"team_id": team_id, "sequence": sequence}))
    assert isinstance(store, BatchEventStore)
    for start in range(0, len(events), 5000):
        store.save_events(events[start : start + 5000])
    store.save_team(process.model_copy(update={"team_id": team_id, "status": TeamStatus.STOPPED}))
    return team_id


def append_rate(store: EventStore, sample: list[PersistedEvent], count: int) -> float:
    messages = [sample[i % len(sample)].event for i in range(count)]
    subscriber = PersistenceSubscriber(uuid4(), store)
    started = time.perf_counter()
    for message in messages:
        subscriber.on_message(message)
    subscriber.flush(300)
    elapsed = time.perf_counter() - started
    subscriber.close()
    return count / elapsed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def flow(runtime: TeamRuntime, persistence: PersistenceSubscriber, count: int) -> dict[str, object]:
    """Send ``count`` messages through ``runtime`` and time them up to durability."""
    runtime.wait_idle(30)
    persistence.flush(30)
    base = persistence.durable_sequence
    ARRIVALS.reset(count)
    samples: list[tuple[float, int, int]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            samples.append((time.perf_counter(), len(ARRIVALS.times), persistence.durable_sequence))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    for i in range(count):
        runtime.send(f"message {i}")
    sent = time.perf_counter() - started
    if not ARRIVALS.complete.wait(300):
        raise RuntimeError(f"only {len(ARRIVALS.times)} of {count} messages were delivered")
    delivered = ARRIVALS.times[-1] - started
    runtime.wait_idle(300)
    persistence.flush(300)
    durable = time.perf_counter() - started
    done.set()
    sampler.join()
    events = persistence.durable_sequence - base
    lags: list[float] = []
    for at, arrived, acknowledged in samples:
        durable_messages = (acknowledged - base) // 3
        if arrived > durable_messages:
            lags.append((at - ARRIVALS.times[durable_messages]) * 1000)
        elif arrived:
            lags.append(0.0)
    return {
        "messages": count,
        "events_per_s": round(events / durable),
        "delivery_msgs_per_s": round(count / delivered),
        "lag_ms": {"p50": round(percentile(lags, 0.5), 1), "p99": round(percentile(lags, 0.99), 1)},
        "send_s": round(sent, 3),
        "delivery_s": round(delivered, 3),
        "durable_s": round(durable, 3),
    }


def end_to_end(store: EventStore, system: ActorSystem, count: int) -> dict[str, object]:
    """``count`` sends into an echo member of a managed team, timed up to durability.

    The figures are those of the team as the manager builds it (sends held back
    by its ``SendGate``); ``unthrottled`` repeats the run on the same team with
    the gate removed: delivery at the kernel's own pace, persistence trailing.
    """
    manager = TeamManager(system, store)
    runtime = manager.create_team(bench_card())
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None
    result = flow(runtime, persistence, count)
    gate = runtime.gate
    runtime.attach_gate(None)
    result["unthrottled"] = flow(runtime, persistence, count)
    runtime.attach_gate(gate)
    manager.stop_team(runtime.id)
    manager.delete_team(runtime.id)
    return result


def bench_store(
    url: str, sizes: list[int], appends: int, messages: int = 5000
) -> dict[str, object]:
    store = open_event_store(url)
    system = ActorSystem()
    try:
        process, sample = template(store, system)
        rate = append_rate(store, sample, appends)
        manager = TeamManager(system, store)
        resume: dict[str, float] = {}
        for size in sizes:
            team_id = write_log(store, process, sample, size)
            started = time.perf_counter()
            manager.resume_team(team_id)
            resume[str(size)] = round(time.perf_counter() - started, 3)
            manager.stop_team(team_id)
            manager.delete_team(team_id)
        flow = end_to_end(store, system, messages)
        return {"append_per_s": round(rate), "resume_s": resume, "end_to_end": flow}
    finally:
        system.shutdown(timeout=30)
        store.close()


def init_store(url: str) -> None:
    """Run the store plugin's schema initialiser, when it has one."""
    from akgentic.plugins import get_registry
    from akgentic.team.urls import store_scheme

    spec = get_registry().event_store_for_scheme(store_scheme(url))
    if spec.init is not None:
        spec.init(url)


@contextmanager
def postgres_schema(server: str) -> Iterator[str | None]:
    """A store URL on a fresh schema of ``server`` (dropped afterwards); None if unusable."""
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        print("bench: postgresql skipped: psycopg is not installed", file=sys.stderr)
        yield None
        return
    schema = f"bench_{uuid4().hex[:12]}"
    try:
        psycopg.connect(server, connect_timeout=5).close()
    except psycopg.Error as exc:
        print(f"bench: postgresql skipped: {str(exc).strip()}", file=sys.stderr)
        yield None
        return
    separator = "&" if urlsplit(server).query else "?"
    try:
        yield f"{server}{separator}schema={schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def mongo_database(server: str) -> Iterator[str | None]:
    """A store URL on a fresh database of ``server`` (dropped afterwards)."""
    try:
        import pymongo
    except ImportError:
        print("bench: mongodb skipped: pymongo is not installed", file=sys.stderr)
        yield None
        return
    name = f"bench_{uuid4().hex[:12]}"
    client: pymongo.MongoClient[dict[str, object]] = pymongo.MongoClient(
        server, serverSelectionTimeoutMS=5000
    )
    try:
        client.admin.command("ping")
    except pymongo.errors.PyMongoError as exc:
        print(f"bench: mongodb skipped: {exc}", file=sys.stderr)
        client.close()
        yield None
        return
    try:
        yield urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
    finally:
        client.drop_database(name)
        client.close()


def server_stores(args: argparse.Namespace) -> list[tuple[ServerContext, str]]:
    """(context factory, server URL) for each server-backed store to measure."""
    stores: list[tuple[ServerContext, str]] = []
    postgres = args.postgres or (
        os.environ.get("AKGENTIC_BENCH_POSTGRES_URL")
        or os.environ.get("AKGENTIC_TEST_POSTGRES_URL")
        or DEFAULT_POSTGRES
    )
    if postgres.lower() != "none":
        stores.append((postgres_schema, postgres))
    mongo = (
        args.mongo
        or os.environ.get("AKGENTIC_BENCH_MONGO_URL")
        or os.environ.get("AKGENTIC_TEST_MONGO_URL")
    )
    if mongo and mongo.lower() != "none":
        stores.append((mongo_database, mongo))
    return stores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="benchmark only this store URL")
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--appends", type=int, default=20000)
    parser.add_argument("--messages", type=int, default=5000, help="end_to_end sends")
    parser.add_argument("--postgres", help="PostgreSQL server URL ('none' to skip)")
    parser.add_argument("--mongo", help="MongoDB server URL ('none' to skip)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results: dict[str, object] = {}
    if args.store:
        init_store(args.store)
        results[args.store.partition("://")[0]] = bench_store(
            args.store, sizes, args.appends, args.messages
        )
    else:
        with tempfile.TemporaryDirectory(prefix="akgentic-bench-") as tmp:
            for file_url in (f"sqlite:///{Path(tmp)}/bench.db", f"yaml:///{Path(tmp)}/teams"):
                results[file_url.partition("://")[0]] = bench_store(
                    file_url, sizes, args.appends, args.messages
                )
        for context, server in server_stores(args):
            with context(server) as url:
                if url is not None:
                    init_store(url)
                    results[url.partition("://")[0]] = bench_store(
                        url, sizes, args.appends, args.messages
                    )
    json.dump({"stores": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
