"""``akgentic team``: create, resume, stop, list, inspect and delete teams.

Every command takes ``--store URL`` (default: ``$AKGENTIC_STORE``, else
``sqlite:///.akgentic/akgentic.db`` under the working directory); only
``create`` makes a store that does not exist yet. ``usage`` prints what a
team's models cost, per member, per model and per run, with its budget
(``docs/budgets.md``). ``create``, ``resume``, ``stop``, ``list`` and
``delete`` also take ``--cluster URL`` (default ``$AKGENTIC_CLUSTER``): on a
fleet (``nats://...``) the team is placed there and keeps running after the
command, through the runtime client API, and the output is the same as on one
machine. Agent classes named in a card are imported like a script's modules:
from the card file's directory (``create``), every ``--path DIR``,
``$AKGENTIC_PATH`` and the working directory.

Exit codes: 0 success; 1 the operation is not possible in the team's state
(unknown team, resuming or deleting a running team, a team another process
runs, a claim taken over by another process, a missing, damaged or unwritable
store); 2 invalid input (a card that fails validation, bad metadata, an
unknown store scheme, a malformed id or store URL); 3 (``create`` and ``resume``
with ``--send`` and no chat, as ``akgentic run``) the team's last turn failed, the
team is stopped and saved all the same. On any error nothing is written. ``--debug``
shows the log with tracebacks, as under ``akgentic run``. SIGTERM and SIGHUP
stop a running team as cleanly as Ctrl+C.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from uuid import UUID

import typer
from rich.console import Console
from rich.table import Table

from akgentic.cli.card_input import card_to_start
from akgentic.cli.logs import DebugOption, configure_logging, exit_if_turn_failed
from akgentic.cli.models import BaseUrlOption, ModelOption, resume_model_options
from akgentic.cli.runtime_cmd import (
    ClusterOption,
    add_runtime_commands,
    create_remote,
    list_remote,
    refuse_local_only,
    remote_client,
    remote_cluster,
    resume_remote,
)
from akgentic.cli.scripted import ScriptedOption
from akgentic.cli.session import (
    DEFAULT_TIMEOUT,
    LEAVE,
    PATH_ENV_VAR,
    ConversationPrinter,
    InteractiveOption,
    MetadataOption,
    PathOption,
    SendOption,
    StoreOption,
    TimeoutOption,
    cli_errors,
    err_console,
    fail,
    import_roots,
    managed_teams,
    open_store,
    pairs,
    print_help,
)
from akgentic.cli.tables import print_table
from akgentic.cli.usage_cmd import add_usage_command

if TYPE_CHECKING:
    from akgentic.cluster.client import TeamSummary
    from akgentic.team.manager import TeamManager
    from akgentic.team.models import Process
    from akgentic.team.runtime import TeamRuntime
    from akgentic.team.store import EventStore

__all__ = ["DEFAULT_TIMEOUT", "PATH_ENV_VAR", "team_app"]


def _team_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        fail(f"{text!r} is not a team id (a UUID)", 2)


def _existing_team(
    team_id: str, store: str | None, path: list[Path] | None
) -> tuple[UUID, EventStore]:
    """Set up imports, parse ``team_id`` and open the (existing) store, in that order."""
    import_roots(None, path)
    uid = _team_id(team_id)
    return uid, open_store(store, must_exist=True)


def _with_manager(
    team_id: str,
    store: str | None,
    path: list[Path] | None,
    action: Callable[[TeamManager, UUID], None],
) -> UUID:
    """Run ``action`` on a bare ``TeamManager`` (no teams started); always shut down."""
    from akgentic.core.actor_system import ActorSystem
    from akgentic.team.manager import TeamManager

    uid, event_store = _existing_team(team_id, store, path)
    system = ActorSystem()
    try:
        action(TeamManager(system, event_store), uid)
    finally:
        system.shutdown(timeout=5)
        event_store.close()
    return uid


def _session(
    manager: TeamManager,
    runtime: TeamRuntime,
    sends: list[str] | None,
    interactive: bool,
    timeout: float,
    printer: ConversationPrinter | None = None,
) -> None:
    """Deliver ``sends``, then chat on stdin or wait for idle; always stop the team.

    Lines are routed as ``akgentic run`` routes them (``@Name``, ``/command``, ``/help``,
    ``/quit``). A line typed after the team stopped under the session (idle, or stopped
    from elsewhere) is refused, and leaving never stops a copy another process runs since.
    """
    from akgentic.agent.session import route_line

    try:
        for text in sends or []:
            _report(route_line(runtime, text))
        if interactive:
            err_console.print(f"team {runtime.id} running; type messages, Ctrl+D or Ctrl+C to stop")
            if printer is not None:
                print_help(printer.console, printer, runtime)
            while True:
                line = sys.stdin.readline()
                if not line:
                    if _runs(manager, runtime):
                        runtime.wait_idle(timeout)  # let what was typed last reach its members
                    break
                text = line.strip()
                if text in LEAVE:
                    break
                if text == "/help" and printer is not None:
                    print_help(printer.console, printer, runtime)
                elif text:
                    _send_typed(manager, runtime, text)
        elif not runtime.wait_idle(timeout):
            err_console.print(
                f"[yellow]warning:[/yellow] team still busy after {timeout:g} s; stopping"
            )
    except KeyboardInterrupt:
        if manager.claim_lost(runtime.id) is None:
            err_console.print("interrupted: stopping the team")
    finally:
        try:
            manager.stop_team(runtime.id, here_only=True)
        except KeyboardInterrupt:
            # The interrupt that says "the claim was lost" may land while stopping.
            lost = manager.claim_lost(runtime.id)
            if lost is None:
                raise
            raise lost from None


def _runs(manager: TeamManager, runtime: TeamRuntime) -> bool:
    """Whether this session's manager still runs the team (it may have stopped idle)."""
    return manager.get_runtime(runtime.id) is runtime and runtime.orchestrator_addr.is_alive()


def _send_typed(manager: TeamManager, runtime: TeamRuntime, text: str) -> None:
    """Send a typed line, or end the session with one line when the team is no longer run."""
    from akgentic.agent.session import route_line

    stopped = (
        f"team {runtime.id} was stopped while this session waited (idle, or from "
        "elsewhere); the line was not sent. Resume the team to go on"
    )
    lost = manager.claim_lost(runtime.id)
    if lost is not None:
        raise lost
    if not _runs(manager, runtime):
        fail(stopped)
    try:
        _report(route_line(runtime, text))
    except Exception:
        lost = manager.claim_lost(runtime.id)
        if lost is not None:
            raise lost from None
        if _runs(manager, runtime):
            raise
        fail(stopped)  # it stopped between the check and the send


def _report(problem: str | None) -> None:
    if problem:
        err_console.print(f"[red]not sent:[/red] {problem}", soft_wrap=True)


def _manager(
    store: EventStore, printer: ConversationPrinter, debug: bool
) -> AbstractContextManager[TeamManager]:
    configure_logging(debug)  # a failed turn: the printer's one line, no traceback
    return managed_teams(store, printer)


def _check_timeout(timeout: float) -> None:
    """One error line and exit 2 for a timeout no clock can hold (``inf``, ``nan``, ``-1``)."""
    from akgentic.cli.timeouts import timeout_problem

    problem = timeout_problem(timeout)
    if problem:
        fail(problem, 2)


def _refuse_model_on_cluster(model: str | None, base_url: str | None) -> None:
    if model or base_url:
        fail(
            "--model and --base-url apply to a team run here; on a cluster, "
            "name the model in the card",
            2,
        )


def _interactive(flag: bool | None) -> bool:
    return sys.stdin.isatty() if flag is None else flag


def _summary(process: Process) -> dict[str, Any]:
    from akgentic.cluster.client import TeamSummary

    return _row(TeamSummary.of(process))


def _row(summary: TeamSummary) -> dict[str, Any]:
    """One team as ``list`` and ``inspect`` print it, from this store or from a fleet."""
    return {
        "team_id": str(summary.team_id),
        "name": summary.name,
        "status": str(summary.status),
        "user_id": summary.user_id,
        "created_at": summary.created_at.isoformat(),
        "updated_at": summary.updated_at.isoformat(),
        "metadata": summary.metadata,
        "metadata_indexes": list(summary.metadata_indexes),
        "parent_id": None if summary.parent_id is None else str(summary.parent_id),
        "parent_sequence": summary.parent_sequence,
        "abandoned_for": None if summary.abandoned_for is None else str(summary.abandoned_for),
        "lineage": summary.lineage,
        "reason": summary.reason,
    }


def _print_teams(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"teams ({len(rows)})")
    # Ids are what the other commands take: never cut or wrap them.
    table.add_column("team id", no_wrap=True, min_width=36)
    for column in ("name", "status", "user", "updated", "metadata", "lineage"):
        table.add_column(column)
    for row in rows:
        meta = ", ".join(e.replace("|", "=", 1) for e in row["metadata_indexes"])
        table.add_row(
            row["team_id"],
            row["name"] or "",
            row["status"] if not row.get("reason") else f"{row['status']}: {row['reason']}",
            row["user_id"],
            row["updated_at"][:19],
            meta,
            row.get("lineage") or "",
        )
    print_table(table)


# ------------------------------------------------------------------ commands


def team_app() -> typer.Typer:
    """The ``team`` command group."""
    app = typer.Typer(help="Create, resume, list, inspect and delete teams.", no_args_is_help=True)

    @app.command("create")
    def create(
        card: Annotated[Path, typer.Argument(help="Team card YAML file.")],
        metadata: MetadataOption = None,
        send: SendOption = None,
        interactive: InteractiveOption = None,
        timeout: TimeoutOption = DEFAULT_TIMEOUT,
        store: StoreOption = None,
        path: PathOption = None,
        scripted: ScriptedOption = None,
        cluster: ClusterOption = None,
        model: ModelOption = None,
        base_url: BaseUrlOption = None,
        debug: DebugOption = False,
    ) -> None:
        """Create a team from CARD; deliver --send messages; chat or wait until idle; stop.

        With --cluster naming a fleet, the team is placed there, the --send
        messages are delivered (each acknowledged once durable) and the team
        keeps running there; the command prints its id.
        """
        with cli_errors(), ExitStack() as stack:
            _check_timeout(timeout)
            fleet = remote_cluster(cluster)
            if fleet is not None:
                refuse_local_only(interactive, scripted)
                _refuse_model_on_cluster(model, base_url)
                typer.echo(str(create_remote(fleet, card, path, metadata, send, timeout)))
                return
            team_card, value = card_to_start(card, path, metadata, scripted, stack, model, base_url)
            chat = _interactive(interactive)
            event_store = open_store(store, must_exist=False)
            printer = ConversationPrinter(Console(highlight=False) if chat else err_console)
            with _manager(event_store, printer, debug) as manager:
                runtime = manager.create_team(team_card, metadata=value)
                _session(manager, runtime, send, chat, timeout)
            typer.echo(str(runtime.id))
            exit_if_turn_failed(chat, printer.last_turn_failed)

    @app.command("resume")
    def resume(
        team_id: Annotated[str, typer.Argument(help="Id of a stopped team.")],
        send: SendOption = None,
        interactive: InteractiveOption = None,
        timeout: TimeoutOption = DEFAULT_TIMEOUT,
        store: StoreOption = None,
        path: PathOption = None,
        cluster: ClusterOption = None,
        model: ModelOption = None,
        base_url: BaseUrlOption = None,
        debug: DebugOption = False,
    ) -> None:
        """Resume a stopped team from its log; deliver --send messages; chat or wait; stop.

        With --cluster naming a fleet, the team is placed there again and keeps running.
        """
        with cli_errors():
            _check_timeout(timeout)
            fleet = remote_cluster(cluster)
            if fleet is not None:
                refuse_local_only(interactive)
                _refuse_model_on_cluster(model, base_url)
                uid = _team_id(team_id)
                resume_remote(fleet, uid, send, timeout)
                typer.echo(str(uid))
                return
            configure = resume_model_options(model, base_url)
            uid, event_store = _existing_team(team_id, store, path)
            chat = _interactive(interactive)
            # The chat looks as under ``akgentic run``: coloured, intents shown.
            console = Console(highlight=False) if chat else err_console
            printer = ConversationPrinter(console, rich=True)
            with _manager(event_store, printer, debug) as manager:
                runtime = manager.resume_team(uid, configure=configure)
                _session(manager, runtime, send, chat, timeout, printer)
            typer.echo(str(runtime.id))
            exit_if_turn_failed(chat, printer.last_turn_failed)

    @app.command("stop")
    def stop(
        team_id: Annotated[str, typer.Argument(help="Id of a team recorded as running.")],
        store: StoreOption = None,
        path: PathOption = None,
        cluster: ClusterOption = None,
    ) -> None:
        """Stop a team: ask the process running it to stop, or mark it stopped if that is gone.

        A team run by ``akgentic`` on this machine is asked to stop (SIGTERM) and
        this command waits until it has; for one run elsewhere it says so and
        changes nothing. A team whose process died is recorded as stopped.
        With --cluster naming a fleet, the worker holding the team stops it.
        """
        with cli_errors():
            fleet = remote_cluster(cluster)
            if fleet is not None:
                uid = _team_id(team_id)
                with remote_client(fleet) as client:
                    client.stop(uid)
            else:
                uid = _with_manager(team_id, store, path, lambda m, u: m.stop_team(u))
            typer.echo(f"team {uid} stopped")

    @app.command("list")
    def list_(
        status: Annotated[
            str | None,
            typer.Option("--status", help="running, passivated, broken, stopped or deleted."),
        ] = None,
        metadata: MetadataOption = None,
        user: Annotated[str | None, typer.Option("--user", help="Only this user's teams.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
        store: StoreOption = None,
        path: PathOption = None,
        cluster: ClusterOption = None,
    ) -> None:
        """List teams, filtered by status, user and metadata (KEY=VALUE, all must match).

        A store that does not exist is an error naming it (nothing is created).
        With --cluster naming a fleet, the teams of the store its workers share.
        """
        from akgentic.team.models import TeamStatus

        with cli_errors():
            import_roots(None, path)
            wanted: TeamStatus | None = None
            if status is not None:
                try:
                    wanted = TeamStatus(status.lower())
                except ValueError:
                    fail(
                        f"unknown status {status!r} "
                        "(running, passivated, broken, stopped, deleted)",
                        2,
                    )
            filters = pairs(metadata, "--metadata")
            fleet = remote_cluster(cluster)
            if fleet is not None:
                rows = [_row(s) for s in list_remote(fleet, wanted, user, filters)]
            else:
                event_store = open_store(store, must_exist=True)
                try:
                    found = event_store.list_teams(user_id=user, status=wanted, metadata=filters)
                finally:
                    event_store.close()
                rows = [_summary(p) for p in found]
            _print_teams(rows, as_json)

    @app.command("inspect")
    def inspect(
        team_id: Annotated[str, typer.Argument(help="Team id.")],
        events: Annotated[bool, typer.Option("--events", help="Also list the event log.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Show a team's record (card, status, metadata, roster) and optionally its events."""
        from akgentic.team.errors import TeamNotFoundError

        with cli_errors():
            uid, event_store = _existing_team(team_id, store, path)
            try:
                process = event_store.load_team(uid)
                if process is None:
                    raise TeamNotFoundError(uid)
                log = event_store.load_events(uid)
            finally:
                event_store.close()
            _print_inspect(process, log, events, as_json)

    @app.command("delete")
    def delete(
        team_id: Annotated[str, typer.Argument(help="Id of a stopped team.")],
        store: StoreOption = None,
        path: PathOption = None,
        cluster: ClusterOption = None,
    ) -> None:
        """Delete a stopped team: its record, events and agent states.

        With --cluster naming a fleet, a team running there is stopped first.
        """
        with cli_errors():
            fleet = remote_cluster(cluster)
            if fleet is not None:
                uid = _team_id(team_id)
                with remote_client(fleet) as client:
                    client.delete(uid)
            else:
                uid = _with_manager(team_id, store, path, lambda m, u: m.delete_team(u))
            typer.echo(f"team {uid} deleted")

    @app.command("fork")
    def fork(
        team_id: Annotated[str, typer.Argument(help="Id of the team to fork (running or not).")],
        at: Annotated[
            int, typer.Option("--at", help="The last event of the parent the fork holds.")
        ],
        name: Annotated[
            str | None, typer.Option("--name", help="The fork's name (default: the parent's).")
        ] = None,
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Make a new team of TEAM_ID's events 1..SEQ (workspace included); print its id.

        The parent is only read and may keep running. The fork is stopped:
        `akgentic team resume NEW_ID` runs it. A tool call in flight at SEQ is
        reported to its agent as interrupted by the fork, never run again.
        """
        with cli_errors():
            uid = _with_fork(team_id, store, path, lambda m, u: m.fork_team(u, at, name))
            typer.echo(str(uid))

    @app.command("rewind")
    def rewind(
        team_id: Annotated[str, typer.Argument(help="Id of a stopped team.")],
        to: Annotated[int, typer.Option("--to", help="The last event the rewound team keeps.")],
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Fork TEAM_ID at SEQ under its name and mark TEAM_ID abandoned; print the new id.

        Nothing is deleted: the abandoned team's events stay readable.
        """
        with cli_errors():
            uid = _with_fork(team_id, store, path, lambda m, u: m.rewind_team(u, to))
            typer.echo(str(uid))

    @app.command("lineage")
    def lineage(
        team_id: Annotated[str, typer.Argument(help="Team id.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Show where TEAM_ID comes from (its ancestors) and every fork made of it."""
        from akgentic.team.errors import TeamNotFoundError
        from akgentic.team.fork import lineage_of

        with cli_errors():
            uid, event_store = _existing_team(team_id, store, path)
            try:
                if event_store.load_team(uid) is None:
                    raise TeamNotFoundError(uid)
                family = lineage_of(event_store.list_teams(), uid)
            finally:
                event_store.close()
            if as_json:
                typer.echo(json.dumps(family, indent=2))
                return
            for depth, node in enumerate(family["ancestors"]):
                status = f", {node['status']}" if node["status"] else ""
                typer.echo(
                    "  " * depth + f"{node['team_id']} {node['name'] or ''} (forked at "
                    f"{node['forked_at']}{status})"
                )
            _print_forks(family["forks"], len(family["ancestors"]) + 1, str(uid))

    add_runtime_commands(app)
    add_usage_command(app)
    return app


def _with_fork(
    team_id: str,
    store: str | None,
    path: list[Path] | None,
    action: Callable[[TeamManager, UUID], Any],
) -> UUID:
    """Run a fork or rewind on a bare manager; the new team's id."""
    made: list[UUID] = []
    _with_manager(team_id, store, path, lambda m, u: made.append(action(m, u).team_id))
    return made[0]


def _print_forks(forks: list[dict[str, Any]], depth: int, here: str) -> None:
    if depth and here:
        typer.echo("  " * (depth - 1) + f"{here} (this team)")
    for node in forks:
        mark = f", abandoned for {node['abandoned_for'][:8]}" if node["abandoned_for"] else ""
        verb = "rewind" if node["rewind"] else "fork"
        where = f"{verb} at {node['at_sequence']}, {node['status']}{mark}"
        typer.echo("  " * depth + f"{node['team_id']} {node['name'] or ''} ({where})")
        _print_forks(node["forks"], depth + 1, "")


def _print_inspect(process: Process, log: list[Any], events: bool, as_json: bool) -> None:
    from akgentic.cli.event_summary import TABLE_WIDTH, event_kind, summarize
    from akgentic.team.restorer import live_starts

    messages = [stored.event for stored in log]
    roster = [
        {"name": s.config.name, "role": s.config.role, "agent_id": str(s.sender.agent_id)}
        for s in live_starts(messages)
        if s.sender is not None
    ]
    info = _summary(process)
    info["event_count"] = len(log)
    info["roster"] = roster
    rows = [
        {
            "sequence": stored.sequence,
            "type": type(stored.event).__name__,
            "event": event_kind(stored.event),
            "sender": stored.event.sender.name if stored.event.sender is not None else None,
            "summary": summarize(stored.event, None if as_json else TABLE_WIDTH),
        }
        for stored in log
    ]
    if as_json:
        if events:
            info["events"] = rows
        info["team_card"] = process.team_card.to_data()
        typer.echo(json.dumps(info, indent=2, default=str))
        return
    console = Console(highlight=False)
    console.print(f"[bold]team[/bold] {info['team_id']} ({info['name'] or 'unnamed'})")
    for key in ("status", "user_id", "created_at", "updated_at", "event_count"):
        console.print(f"  {key}: {info[key]}")
    if info["metadata"] is not None:
        console.print(f"  metadata: {json.dumps(info['metadata'], default=str)}")
    console.print("  roster: " + ", ".join(f"{m['name']} ({m['role']})" for m in roster))
    if events:
        table = Table(title="events")
        for column in ("seq", "type", "sender", "summary"):
            table.add_column(column)
        for row in rows:
            kind = f"{row['type']}: {row['event']}" if row["event"] else row["type"]
            table.add_row(str(row["sequence"]), kind, row["sender"] or "", row["summary"])
        print_table(table)


def _main() -> None:  # pragma: no cover - exercised through subprocesses
    from akgentic.cli.store_cmd import store_app

    root = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True)
    root.add_typer(team_app(), name="team")
    root.add_typer(store_app(), name="store")
    root(prog_name="akgentic")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    _main()
