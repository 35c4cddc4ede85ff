"""``akgentic team send|events|where`` and the ``--cluster`` forms of the lifecycle commands.

Each takes ``--cluster URL`` (default ``$AKGENTIC_CLUSTER``, else ``local:``,
which runs the team in this process on ``--store``). ``send`` prints the
acknowledgement (durable sequence, worker) as JSON; ``events`` prints one JSON
line per event, replayed from ``--from-sequence`` and, with ``--follow``, live
until interrupted (or ``--idle`` seconds without an event). Exit codes: 0
success; 1 unknown team, a missing store, or no worker answered; 2 invalid input.

``team create|resume|stop|list|delete --cluster URL`` on a runtime whose teams
run outside this process (a fleet) go through the same client API
(:func:`remote_cluster` tells them apart, by the runtime's ``in_process`` flag,
never by its scheme); their output is the one-machine output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from uuid import UUID

import typer

if TYPE_CHECKING:
    from akgentic.cluster.client import RuntimeClient, TeamSummary
    from akgentic.plugins import RuntimeSpec
    from akgentic.team.models import TeamStatus

__all__ = [
    "ClusterOption",
    "add_runtime_commands",
    "create_remote",
    "list_remote",
    "refuse_local_only",
    "remote_client",
    "remote_cluster",
    "resume_remote",
]

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


def _runtime(cluster: str | None) -> tuple[str, RuntimeSpec]:
    """The cluster URL (default applied) and its runtime; an unusable URL exits 2."""
    from akgentic.cluster.connect import cluster_scheme, default_cluster_url
    from akgentic.plugins import current_registry
    from akgentic.team.errors import TeamError

    target = cluster or default_cluster_url()
    try:
        return target, current_registry().runtime_for_scheme(cluster_scheme(target))
    except (TeamError, ValueError) as exc:
        _fail(str(exc), 2)


def _existing_store(store: str | None) -> None:
    """Exit 1 naming the path when a file-backed store does not exist (nothing is created)."""
    from akgentic.cli.session import missing_store, store_path_problem, store_url
    from akgentic.team.errors import EventStoreError

    try:
        target = store_url(store)
        problem = store_path_problem(target, must_exist=True) or missing_store(target)
    except (EventStoreError, ValueError) as exc:
        _fail(str(exc), 2)
    if problem is not None:
        _fail(problem, 1)


def remote_cluster(cluster: str | None) -> str | None:
    """``cluster`` when it names a runtime whose teams run outside this process, else ``None``.

    ``None`` (no ``--cluster`` and no ``$AKGENTIC_CLUSTER``) and an in-process
    runtime such as ``local:`` mean the one-machine form of a command.
    """
    if cluster is None:
        return None
    target, spec = _runtime(cluster)
    return None if spec.in_process else target


@contextmanager
def _connected(
    cluster: str | None, store: str | None, not_possible: tuple[type[Exception], ...]
) -> Iterator[Any]:
    """A cluster client, closed on leaving; errors become the documented exit codes.

    A URL that cannot be connected to is invalid input (2); a store an
    in-process runtime would open that does not exist is refused (1) before
    anything is created. Inside the block, ``not_possible`` errors (unknown
    team, no worker) exit 1 and any other ``ValueError`` exits 2.
    """
    from akgentic.cluster import connect
    from akgentic.team.errors import TeamError

    target, spec = _runtime(cluster)
    if spec.in_process:
        _existing_store(store)
    try:
        client = connect(target, store=store)
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


# ------------------------------------------------- lifecycle on a fleet (--cluster)


@contextmanager
def remote_client(url: str) -> Iterator[RuntimeClient]:
    """A client of the fleet ``url`` names, closed on leaving (inside ``cli_errors``).

    A URL that cannot be connected to exits 2; a request the fleet cannot carry
    out (no worker answered, a refused placement) exits 1 with one line.
    """
    from akgentic.cli.session import fail
    from akgentic.cluster import ClusterError, connect
    from akgentic.team.errors import TeamError

    try:
        client = connect(url)
    except (TeamError, ValueError) as exc:
        fail(str(exc), 2)
    try:
        yield client
    except ClusterError as exc:
        fail(str(exc), 1)
    finally:
        client.close()


def create_remote(
    url: str,
    card: Path,
    path: list[Path] | None,
    metadata: list[str] | None,
    sends: list[str] | None,
    timeout: float,
) -> UUID:
    """Place a team built from ``card`` on the fleet and deliver ``sends``; returns its id.

    The card and its metadata are checked here first, as on one machine; the
    members' models are built (and their keys read) by the workers.
    """
    from akgentic.cli.card_input import card_metadata
    from akgentic.cli.session import import_roots
    from akgentic.team.card_yaml import load_team_card

    import_roots(card, path)
    team_card = load_team_card(card)
    value = card_metadata(team_card, metadata)
    with remote_client(url) as client:
        team_id = client.create(team_card, metadata=value)
        for text in sends or []:
            client.send(team_id, text, timeout=timeout)
    return team_id


def resume_remote(url: str, team_id: UUID, sends: list[str] | None, timeout: float) -> None:
    """Place a stopped team on the fleet again and deliver ``sends``."""
    with remote_client(url) as client:
        client.resume(team_id)
        for text in sends or []:
            client.send(team_id, text, timeout=timeout)


def list_remote(
    url: str, status: TeamStatus | None, user: str | None, metadata: dict[str, str]
) -> list[TeamSummary]:
    """The fleet store's teams matching every filter."""
    with remote_client(url) as client:
        return client.list_teams(status=status, user_id=user, metadata=metadata)


def refuse_local_only(interactive: bool | None = None, scripted: Path | None = None) -> None:
    """Options that need the team in this process are invalid input with a fleet (exit 2)."""
    from akgentic.cli.session import fail

    if interactive:
        fail(
            "--interactive chats with a team in this process; a team on a cluster is "
            "talked to with `akgentic team send` and `akgentic team events --follow`",
            2,
        )
    if scripted is not None:
        fail("--scripted serves models from this process only; it cannot serve a cluster", 2)
