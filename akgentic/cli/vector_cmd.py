"""``akgentic vector``: deployment commands for the vector clusters of installed backends.

``collections`` lists what each configured cluster holds; ``reap TEAM_ID`` deletes a
deleted team's rows everywhere (team-scoped collections only: a shared collection
is bounded by scope and never reaped by team). Only backends whose rows live in a
cluster are walked; the in-memory backend has nothing outside its team.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console

__all__ = ["vector_app"]

_DIMENSION = 1  # an admin backend reads and deletes rows; it never checks widths


def _cluster_backends(name: str | None) -> list[Any]:
    from akgentic.plugins import get_registry
    from akgentic.vector.registry import get_backend_spec

    specs = get_registry().vector_backends()
    if name is not None:
        spec = get_backend_spec(name)
        if spec.persists_in_actor_state:
            raise ValueError(f"backend {name!r} keeps its rows in each team, not in a cluster")
        if spec.require_configured is not None:
            spec.require_configured(f"akgentic vector --backend {name}")
        return [spec]
    chosen = []
    for spec in specs.values():
        if spec.persists_in_actor_state or spec.is_configured is None:
            continue
        try:
            if spec.is_configured():
                chosen.append(spec)
        except Exception as exc:
            Console(stderr=True).print(f"skipping {spec.name}: {exc}", highlight=False)
    return sorted(chosen, key=lambda s: s.name)


def _admin(spec: Any) -> Any:
    from akgentic.vector.param import VectorStoreParam
    from akgentic.vector.registry import BackendContext

    param = VectorStoreParam(backend=spec.name, dimension=_DIMENSION, embedding_provider="none")
    return spec.factory(BackendContext(param, team_id=None))


@contextmanager
def _cluster_errors() -> Iterator[None]:
    """Any failure reaching a cluster is one ``error:`` line and exit 2; clients are closed."""
    from akgentic.vector.clients import close_all

    try:
        yield
    except Exception as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    finally:
        close_all()


def vector_app() -> typer.Typer:
    """The ``vector`` command group."""
    app = typer.Typer(help="Inspect and clean the vector clusters.", no_args_is_help=True)

    @app.command("collections")
    def collections(
        backend: Annotated[str | None, typer.Option(help="Only this backend")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    ) -> None:
        """List the collections of every configured cluster backend."""
        from akgentic.vector.protocol import is_shared

        with _cluster_errors():
            found = {
                s.name: sorted(_admin(s).list_collections()) for s in _cluster_backends(backend)
            }
        if as_json:
            typer.echo(json.dumps({"backends": found}))
            return
        if not found:
            typer.echo("no cluster backend is configured")
        for name, names in found.items():
            typer.echo(f"{name}:")
            for collection in names:
                typer.echo(f"  {collection}{'  (shared)' if is_shared(collection) else ''}")

    @app.command("reap")
    def reap(
        team_id: Annotated[str, typer.Argument(help="Id of the deleted team")],
        backend: Annotated[str | None, typer.Option(help="Only this backend")] = None,
        collection: Annotated[
            str | None, typer.Option(help="Only this collection (never a shared one)")
        ] = None,
    ) -> None:
        """Delete every row a team wrote in the team-scoped collections of the clusters."""
        from akgentic.vector.protocol import is_shared

        if collection is not None and is_shared(collection):
            Console(stderr=True).print(
                f"[red]error:[/red] collection {collection!r} is shared across teams; "
                "its rows are bounded by scope and are never reaped by team",
                highlight=False,
            )
            raise typer.Exit(2)
        total = 0
        with _cluster_errors():
            for spec in _cluster_backends(backend):
                admin = _admin(spec)
                names = [collection] if collection else admin.list_collections()
                for name in names:
                    if is_shared(name):
                        typer.echo(f"{spec.name}/{name}: shared, skipped")
                        continue
                    removed = admin.delete_by_team(name, team_id)
                    total += removed
                    typer.echo(f"{spec.name}/{name}: {removed} rows deleted")
        typer.echo(f"{total} rows of team {team_id} deleted")

    return app
