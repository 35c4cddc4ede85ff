"""The ``nats`` plugin: the ``nats://`` runtime and the ``akgentic worker`` command.

nats-py is imported only when a client, a worker or ``cluster init`` runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import RuntimeSpec, hookimpl

if TYPE_CHECKING:
    import typer

    from akgentic_nats.client import NatsRuntime


def connect(url: str, store: str | None) -> NatsRuntime:
    """A client of the cluster ``url`` names."""
    from akgentic_nats.client import connect_nats

    return connect_nats(url, store)


def init(url: str) -> None:
    """Create the stream, consumer and bucket (idempotent)."""
    import nats

    from akgentic_nats.setup import ensure_cluster
    from akgentic_nats.target import parse_nats_url

    target = parse_nats_url(url)

    async def run() -> None:
        nc = await nats.connect(list(target.servers))
        try:
            await ensure_cluster(nc.jetstream(), target)
        finally:
            await nc.close()

    asyncio.run(run())


def status(url: str) -> dict[str, Any]:
    """Workers (live or not, with their teams) and the placement counts."""
    import nats

    from akgentic_nats.target import parse_nats_url
    from akgentic_nats.wire import decode

    target = parse_nats_url(url)

    async def run() -> dict[str, Any]:
        nc = await nats.connect(list(target.servers))
        try:
            js = nc.jetstream()
            info = await js.consumer_info(target.stream, target.consumer)
            kv = await js.key_value(target.bucket)
            workers = []
            try:
                keys = await kv.keys()
            except Exception:
                keys = []
            for key in keys:
                record = decode((await kv.get(key)).value or b"")
                record["live"] = time.time() - float(record.get("at", 0)) <= target.lease
                workers.append(record)
            return {
                "url": url,
                "lease_s": target.lease,
                "placed": int(info.num_ack_pending or 0),
                "waiting": int(info.num_pending or 0),
                "workers": sorted(workers, key=lambda w: str(w.get("name"))),
            }
        finally:
            await nc.close()

    return asyncio.run(run())


@hookimpl
def akgentic_runtimes() -> Iterable[RuntimeSpec]:
    """Register the NATS JetStream runtime for ``nats://`` cluster URLs."""
    return [
        RuntimeSpec(
            name="nats",
            description="Teams placed on a fleet of workers over NATS JetStream",
            schemes=("nats",),
            connect=connect,
            init=init,
            status=status,
        )
    ]


@hookimpl
def akgentic_cli(app: typer.Typer) -> None:
    """Add ``akgentic worker``."""
    import typer

    @app.command("worker")
    def worker(
        cluster: str = typer.Option(
            ..., "--cluster", envvar="AKGENTIC_CLUSTER", help="nats://host:4222[?prefix=P&lease=S]"
        ),
        store: str | None = typer.Option(
            None, "--store", envvar="AKGENTIC_STORE", help="Event store URL (the fence)"
        ),
        capacity: int = typer.Option(100, "--capacity", min=1, help="Most teams held at once"),
        name: str | None = typer.Option(None, "--name", help="Worker name (default host-pid)"),
        passivate_after: float = typer.Option(
            300.0,
            "--passivate-after",
            min=0.0,
            help="Idle seconds before a team is passivated when its card does not say (0: never)",
        ),
    ) -> None:
        """Hold teams placed on the NATS cluster until SIGTERM (which hands them over)."""
        import logging

        from akgentic_nats.target import parse_nats_url
        from akgentic_nats.worker import Worker

        logging.basicConfig(level=logging.WARNING)
        logging.getLogger("akgentic_nats").setLevel(logging.INFO)
        Worker(
            parse_nats_url(cluster),
            store,
            capacity=capacity,
            name=name,
            passivate_after=passivate_after or None,
        ).run()
