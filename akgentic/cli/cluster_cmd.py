"""``akgentic cluster init|status``: the runtime a ``--cluster`` URL names."""

from __future__ import annotations

import json

import typer

__all__ = ["cluster_app"]

_CLUSTER = typer.Option(
    None, "--cluster", envvar="AKGENTIC_CLUSTER", help="Cluster URL (default local:)"
)


def _spec(url: str | None):  # type: ignore[no-untyped-def]
    from akgentic.cluster.connect import cluster_scheme, default_cluster_url
    from akgentic.plugins import current_registry

    target = url or default_cluster_url()
    return target, current_registry().runtime_for_scheme(cluster_scheme(target))


def cluster_app() -> typer.Typer:
    """The ``cluster`` sub-application."""
    app = typer.Typer(
        help="Set up and inspect the runtime teams are placed on.", no_args_is_help=True
    )

    @app.command("init")
    def init(
        url: str = typer.Argument(..., help="Cluster URL, e.g. nats://127.0.0.1:4222"),
    ) -> None:
        """Create what the runtime needs (streams, buckets); safe to run again."""
        target, spec = _spec(url)
        if spec.init is not None:
            spec.init(target)
        typer.echo(f"cluster {target} ready")

    @app.command("status")
    def status(cluster: str | None = _CLUSTER) -> None:
        """Print the runtime's workers and placements as JSON."""
        target, spec = _spec(cluster)
        data = {"url": target, "runtime": spec.name} if spec.status is None else spec.status(target)
        typer.echo(json.dumps(data, indent=2, default=str))

    return app
