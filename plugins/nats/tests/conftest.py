"""Fixtures of the NATS runtime tests: the machine's NATS, PostgreSQL as the fence, real workers.

NATS is ``$AKGENTIC_TEST_NATS_URL`` (default ``nats://127.0.0.1:4222``); every
stream, consumer, bucket and subject is named from a prefix unique to the run
and deleted at teardown. PostgreSQL is ``$AKGENTIC_TEST_POSTGRES_URL``; the
run gets a schema of its own, dropped afterwards. Without a reachable server
the tests skip with the reason, except under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import psycopg
import pytest
from akgentic_nats.setup import ensure_cluster, remove_cluster
from akgentic_nats.target import NatsTarget, parse_nats_url
from akgentic_nats.wire import decode

from akgentic.testing import VirtualRuntimeContract, wait_until

DEFAULT_NATS = "nats://127.0.0.1:4222"
DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
#: Lease of the test clusters (seconds). Failover and the frozen-worker test wait for a
#: lease to lapse, so it is short; a worker renews every quarter lease and a loaded
#: machine still leaves it a margin of more than two seconds.
LEASE = 3


def _unreachable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: a missing service is a failure)")
    pytest.skip(reason)


async def _nats_call(target: NatsTarget, setup: bool) -> None:
    import nats

    nc = await nats.connect(list(target.servers), connect_timeout=5, max_reconnect_attempts=1)
    try:
        js = nc.jetstream()
        await (ensure_cluster(js, target) if setup else remove_cluster(js, target))
    finally:
        await nc.close()


@pytest.fixture(scope="session")
def cluster_url() -> Iterator[str]:
    """A fresh cluster (prefixed names) on the machine's NATS, removed afterwards."""
    yield from fresh_cluster()


def fresh_cluster() -> Iterator[str]:
    """Set up a cluster with names of its own on the machine's NATS; remove it after."""
    server = os.environ.get("AKGENTIC_TEST_NATS_URL") or DEFAULT_NATS
    prefix = f"akgt{uuid4().hex[:10]}"
    url = f"{server}?prefix={prefix}&lease={LEASE}"
    target = parse_nats_url(url)
    try:
        asyncio.run(_nats_call(target, True))
    except Exception as exc:
        _unreachable(f"NATS {server} is unreachable: {exc}")
    yield url
    asyncio.run(_nats_call(target, False))


@pytest.fixture(scope="session")
def store_url() -> Iterator[str]:
    """A PostgreSQL store in a schema of its own (dropped afterwards)."""
    server = os.environ.get("AKGENTIC_TEST_POSTGRES_URL") or DEFAULT_POSTGRES
    try:
        with psycopg.connect(server, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        _unreachable(f"PostgreSQL {server} is unreachable: {str(exc).strip()}")
    from akgentic.plugins import current_registry

    schema = f"akc_{uuid4().hex[:12]}"
    sep = "&" if "?" in server else "?"
    url = f"{server}{sep}schema={schema}&pool_max_size=4"
    init = current_registry().event_store_for_scheme("postgresql").init
    assert init is not None
    init(url)
    yield url
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


class WorkerFleet:
    """``akgentic worker`` subprocesses on one cluster (the contract's :class:`Fleet`)."""

    def __init__(
        self, cluster_url: str, store_url: str, logs: Path, extra: tuple[str, ...] = ()
    ) -> None:
        self.cluster_url = cluster_url
        self.extra = extra
        self.store_url = store_url
        self.logs = logs
        self.target = parse_nats_url(cluster_url)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.paused: set[str] = set()
        self._count = 0

    def start(self) -> str:
        self._count += 1
        name = f"w{self._count}"
        # The child writes to its own copy of the descriptor; ours is closed at once.
        with open(self.logs / f"{name}.log", "wb") as log:
            self.procs[name] = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "akgentic.cli",
                    "worker",
                    "--cluster",
                    self.cluster_url,
                    "--store",
                    self.store_url,
                    "--capacity",
                    "200",
                    "--name",
                    name,
                    *self.extra,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return name

    def names(self) -> list[str]:
        return [n for n, p in self.procs.items() if p.poll() is None and n not in self.paused]

    def ensure(self, count: int) -> None:
        started = [self.start() for _ in range(count - len(self.names()))]
        for name in started:
            self._wait_ready(name)

    def _wait_ready(self, name: str) -> None:
        wait_until(lambda: self._record(name) is not None, timeout=60)

    def _record(self, name: str) -> dict[str, object] | None:
        async def read() -> dict[str, object] | None:
            import nats

            nc = await nats.connect(list(self.target.servers))
            try:
                kv = await nc.jetstream().key_value(self.target.bucket)
                try:
                    entry = await kv.get(name)
                except Exception:
                    return None
                return decode(entry.value or b"")
            finally:
                await nc.close()

        return asyncio.run(read())

    def kill(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGKILL)
        self.procs[name].wait(30)

    def drain(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGTERM)
        self.procs[name].wait(60)

    def pause(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGSTOP)
        self.paused.add(name)

    def wake(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGCONT)
        self.paused.discard(name)

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(30)


@pytest.fixture(scope="module")
def worker_fleet(
    cluster_url: str, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerFleet]:
    """Worker subprocesses shared by a module's tests (started once), all killed at teardown."""
    fleet = WorkerFleet(cluster_url, store_url, tmp_path_factory.mktemp("workers"))
    yield fleet
    fleet.close()


#: Idle seconds after which the ``passivating_fleet``'s workers passivate a team: what
#: the contract the fleet serves expects.
PASSIVATE_AFTER = VirtualRuntimeContract.passivate_after


@pytest.fixture(scope="module")
def virtual_cluster_url() -> Iterator[str]:
    """A cluster for one module alone (no team another module left is adopted there)."""
    yield from fresh_cluster()


@pytest.fixture(scope="module")
def passivating_fleet(
    virtual_cluster_url: str, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerFleet]:
    """Two workers that passivate a team after ``PASSIVATE_AFTER`` idle seconds."""
    fleet = WorkerFleet(
        virtual_cluster_url,
        store_url,
        tmp_path_factory.mktemp("virtual-workers"),
        ("--passivate-after", str(PASSIVATE_AFTER)),
    )
    fleet.ensure(2)
    yield fleet
    fleet.close()
