"""``akgentic team send|events|where``: talk to a team wherever it runs.

Each takes ``--cluster URL`` (default ``$AKGENTIC_CLUSTER``, else ``local:``,
which runs the team in this process on ``--store``). ``send`` prints the
acknowledgement (durable sequence, worker) as JSON; ``events`` prints one JSON
line per event, replayed from ``--from-sequence`` and, with ``--follow``, live
until interrupted (or ``--idle`` seconds without an event). Exit codes: 0
success; 1 unknown team or no worker answered; 2 invalid input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer

__all__ = ["add_runtime_commands"]

ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster", envvar="AKGENTIC_CLUSTER", help="Cluster URL (default local:, this process)."
    ),
]
StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="AKGENTIC_STORE", help="Event store (local runtime only)."),
]


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def _connected(
    cluster: str | None, store: str | None, not_possible: tuple[type[Exception], ...]
) -> Iterator[Any]:
    """A cluster client, closed on leaving; errors become the documented exit codes.

    A URL that cannot be connected to is invalid input (2). Inside the block,
    ``not_possible`` errors (unknown team, no worker) exit 1 and any other
    ``ValueError`` exits 2.
    """
    from akgentic.cluster import connect
    from akgentic.team.errors import TeamError

    try:
        client = connect(cluster, store=store)
    except (TeamError, ValueError) as exc:
        _fail(str(exc), 2)
    try:
        yield client
    except not_possible as exc:
        _fail(str(exc))
    except ValueError as exc:
        _fail(str(exc), 2)
    finally:
        client.close()


def add_runtime_commands(app: typer.Typer) -> None:
    """Add ``send``, ``events`` and ``where`` to the ``team`` application."""

    @app.command("send")
    def send(
        team_id: Annotated[str, typer.Argument(help="Id of the team.")],
        text: Annotated[str, typer.Argument(help="The message to its supervisors.")],
        key: Annotated[
            str | None, typer.Option("--key", help="Idempotency key (a retry never acts twice).")
        ] = None,
        timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait.")] = 60.0,
        cluster: ClusterOption = None,
        store: StoreOpt = None,
    ) -> None:
        """Deliver a message; prints the acknowledgement once it is durable."""
        from akgentic.cluster import ClusterError
        from akgentic.team.errors import TeamError

        with _connected(cluster, store, (ClusterError, TeamError)) as client:
            ack = client.send(team_id, text, key=key, timeout=timeout)
        typer.echo(ack.model_dump_json())

    @app.command("events")
    def events(
        team_id: Annotated[str, typer.Argument(help="Id of the team.")],
        follow: Annotated[bool, typer.Option("--follow", help="Then print live events.")] = False,
        from_sequence: Annotated[
            int, typer.Option("--from-sequence", min=1, help="First sequence to print.")
        ] = 1,
        idle: Annotated[
            float | None, typer.Option("--idle", help="With --follow: stop after N quiet seconds.")
        ] = None,
        cluster: ClusterOption = None,
        store: StoreOpt = None,
    ) -> None:
        """Print a team's events, one JSON object a line."""
        from akgentic.cli.event_summary import summarize
        from akgentic.team.errors import TeamError

        with _connected(cluster, store, (TeamError,)) as client:
            try:
                stream = client.events(
                    team_id, from_sequence=from_sequence, follow=follow, idle_timeout=idle
                )
                for event in stream:
                    line = {
                        "sequence": event.sequence,
                        "type": type(event.event).__name__,
                        "sender": event.event.sender.name if event.event.sender else None,
                        "summary": summarize(event.event, None),
                    }
                    typer.echo(json.dumps(line, default=str))
            except KeyboardInterrupt:
                pass

    @app.command("where")
    def where(
        team_id: Annotated[str, typer.Argument(help="Id of the team.")],
        cluster: ClusterOption = None,
        store: StoreOpt = None,
    ) -> None:
        """Print where a team runs (worker, epoch) as JSON."""
        from akgentic.team.errors import TeamError

        with _connected(cluster, store, (TeamError,)) as client:
            placement = client.where(team_id)
        typer.echo(placement.model_dump_json())
