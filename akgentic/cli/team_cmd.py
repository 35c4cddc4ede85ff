"""``akgentic team``: create, resume, stop, list, inspect and delete teams.

Every command takes ``--store URL`` (default: ``$AKGENTIC_STORE``, else
``sqlite:///.akgentic/akgentic.db`` under the working directory). Agent classes
named in a card are imported like a script's modules: from the card file's
directory (``create``), every ``--path DIR``, ``$AKGENTIC_PATH`` and the
working directory.

Exit codes: 0 success; 1 the operation is not possible in the team's state
(unknown team, resuming or deleting a running team, missing store); 2 invalid
input (a card that fails validation, bad metadata, an unknown store scheme, a
malformed id). On any error nothing is written.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from uuid import UUID

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message
    from akgentic.team.manager import TeamManager
    from akgentic.team.models import Process
    from akgentic.team.runtime import TeamRuntime
    from akgentic.team.store import EventStore

__all__ = ["team_app"]

DEFAULT_TIMEOUT = 120.0
#: Directories (``os.pathsep``-separated) to import agent classes from, like PYTHONPATH.
PATH_ENV_VAR = "AKGENTIC_PATH"

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Event store URL (default: $AKGENTIC_STORE, else sqlite:///.akgentic/akgentic.db).",
        show_default=False,
    ),
]
PathOption = Annotated[
    list[Path] | None,
    typer.Option("--path", help="Extra directory to import agent classes from (repeatable)."),
]
SendOption = Annotated[
    list[str] | None, typer.Option("--send", help="Message to send to the team (repeatable).")
]
InteractiveOption = Annotated[
    bool | None,
    typer.Option(
        "--interactive/--no-interactive",
        help="Chat with the team on stdin (default: when stdin is a terminal).",
        show_default=False,
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout", help="Seconds to wait for the team to become idle (--no-interactive)."
    ),
]
MetadataOption = Annotated[
    list[str] | None, typer.Option("--metadata", help="Metadata KEY=VALUE (repeatable).")
]

_err = Console(stderr=True, highlight=False)


class _CliError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _fail(message: str, code: int = 1) -> NoReturn:
    raise _CliError(message, code)


@contextmanager
def _errors() -> Iterator[None]:
    """Turn expected failures into one ``error:`` line and an exit code."""
    from pydantic import ValidationError

    from akgentic.plugins import UnknownPluginNameError
    from akgentic.team.card_yaml import TeamCardValidationError
    from akgentic.team.errors import (
        EventStoreError,
        TeamNotFoundError,
        TeamStateError,
    )

    try:
        yield
    except _CliError as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(exc.code) from None
    except TeamCardValidationError as exc:
        _err.print(f"[red]error:[/red] {exc.source}: invalid team card")
        for problem in exc.problems:
            _err.print(f"  {problem}")
        raise typer.Exit(2) from None
    except ValidationError as exc:
        _err.print(f"[red]error:[/red] invalid value: {exc}")
        raise typer.Exit(2) from None
    except UnknownPluginNameError as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    except (TeamNotFoundError, TeamStateError) as exc:
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    except EventStoreError as exc:
        code = 2 if isinstance(exc, ValueError) else 1
        _err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code) from None


# ------------------------------------------------------------------ helpers


def _import_roots(card: Path | None, extra: list[Path] | None) -> None:
    """Put the card's directory, ``--path`` dirs, ``$AKGENTIC_PATH`` and the cwd on sys.path."""
    env = [Path(p) for p in os.environ.get(PATH_ENV_VAR, "").split(os.pathsep) if p.strip()]
    roots = [*(extra or []), *env, Path.cwd()]
    if card is not None:
        roots.insert(0, card.resolve().parent)
    for root in reversed(roots):
        text = str(root.resolve())
        if text not in sys.path:
            sys.path.insert(0, text)


def _pairs(items: list[str] | None, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"{what} must be KEY=VALUE, got {item!r}", 2)
        pairs[key.strip()] = value
    return pairs


def _team_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        _fail(f"{text!r} is not a team id (a UUID)", 2)


def _store_url(url: str | None) -> str:
    from akgentic.team.urls import default_store_url

    return url or default_store_url()


def _missing_store(url: str) -> str | None:
    """For a file-backed store, a message when its file or directory does not exist."""
    from akgentic.team.urls import parse_file_url, store_scheme

    scheme = store_scheme(url)
    if scheme not in ("sqlite", "yaml"):
        return None
    bare = url.split("?", 1)[0]
    parsed = parse_file_url(bare, scheme)
    if parsed.path is None or parsed.path.exists():
        return None
    return f"no store at {parsed.path} (create a team first, or run `akgentic store init {url}`)"


def _open_store(url: str | None, *, must_exist: bool) -> EventStore:
    from akgentic.team.urls import open_event_store, store_scheme

    target = _store_url(url)
    store_scheme(target)  # a URL without a scheme fails here, before anything is created
    if must_exist:
        missing = _missing_store(target)
        if missing is not None:
            _fail(missing, 1)
    return open_event_store(target)


class _Printer:
    """Event subscriber printing the team's conversation (text messages only)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._restoring = False
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        from akgentic.core.messages.orchestrator import SentMessage

        if self._restoring or not isinstance(msg, SentMessage):
            return
        content = getattr(msg.message, "content", None)
        if not isinstance(content, str):
            return
        sender = msg.sender.name if msg.sender is not None else "?"
        with self._lock:
            self.console.print(f"[bold]{sender}[/bold] -> {msg.recipient.name}: {content}")

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        return None

    def on_stop(self, team_id: UUID) -> None:
        return None


def _session(
    manager: TeamManager,
    runtime: TeamRuntime,
    sends: list[str] | None,
    interactive: bool,
    timeout: float,
) -> None:
    """Deliver ``sends``, then chat on stdin or wait for idle; always stop the team."""
    try:
        for text in sends or []:
            runtime.send(text)
        if interactive:
            _err.print(f"team {runtime.id} running; type messages, Ctrl+D or Ctrl+C to stop")
            while True:
                line = sys.stdin.readline()
                if not line:
                    break
                text = line.rstrip("\n")
                if text.strip():
                    runtime.send(text)
        elif not runtime.wait_idle(timeout):
            _err.print(f"[yellow]warning:[/yellow] team still busy after {timeout:g} s; stopping")
    except KeyboardInterrupt:
        _err.print("interrupted: stopping the team")
    finally:
        manager.stop_team(runtime.id)


@contextmanager
def _manager(store: EventStore, interactive: bool) -> Iterator[TeamManager]:
    from akgentic.core.actor_system import ActorSystem
    from akgentic.team.manager import TeamManager

    console = Console(highlight=False) if interactive else _err
    system = ActorSystem()
    manager = TeamManager(system, store, subscribers=[_Printer(console)])
    try:
        yield manager
    finally:
        try:
            manager.stop_all()
        finally:
            system.shutdown(timeout=30)
            store.close()


def _interactive(flag: bool | None) -> bool:
    return sys.stdin.isatty() if flag is None else flag


def _summary(process: Process) -> dict[str, Any]:
    from akgentic.team.stores.codec import plain

    metadata = None
    if process.metadata is not None:
        metadata = plain(process.metadata.model_dump(mode="json", exclude={"__model__"}))
        if isinstance(metadata, dict):
            metadata.pop("__model__", None)
    return {
        "team_id": str(process.team_id),
        "name": process.team_card.name,
        "status": str(process.status),
        "user_id": process.user_id,
        "created_at": process.created_at.isoformat(),
        "updated_at": process.updated_at.isoformat(),
        "metadata": metadata,
        "metadata_indexes": list(process.metadata_indexes),
    }


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
    ) -> None:
        """Create a team from CARD; deliver --send messages; chat or wait until idle; stop."""
        from akgentic.team.card_yaml import load_team_card
        from akgentic.team.models import validate_metadata

        with _errors():
            _import_roots(card, path)
            team_card = load_team_card(card)
            pairs = _pairs(metadata, "--metadata")
            value = validate_metadata(team_card, pairs) if pairs else None
            chat = _interactive(interactive)
            event_store = _open_store(store, must_exist=False)
            with _manager(event_store, chat) as manager:
                runtime = manager.create_team(team_card, metadata=value)
                _session(manager, runtime, send, chat, timeout)
            typer.echo(str(runtime.id))

    @app.command("resume")
    def resume(
        team_id: Annotated[str, typer.Argument(help="Id of a stopped team.")],
        send: SendOption = None,
        interactive: InteractiveOption = None,
        timeout: TimeoutOption = DEFAULT_TIMEOUT,
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Resume a stopped team from its log; deliver --send messages; chat or wait; stop."""
        with _errors():
            _import_roots(None, path)
            uid = _team_id(team_id)
            chat = _interactive(interactive)
            event_store = _open_store(store, must_exist=True)
            with _manager(event_store, chat) as manager:
                runtime = manager.resume_team(uid)
                _session(manager, runtime, send, chat, timeout)
            typer.echo(str(runtime.id))

    @app.command("stop")
    def stop(
        team_id: Annotated[str, typer.Argument(help="Id of a team recorded as running.")],
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """Mark a team stopped whose process is gone (after a crash), so it can be resumed."""
        from akgentic.core.actor_system import ActorSystem
        from akgentic.team.manager import TeamManager

        with _errors():
            _import_roots(None, path)
            uid = _team_id(team_id)
            event_store = _open_store(store, must_exist=True)
            system = ActorSystem()
            try:
                TeamManager(system, event_store).stop_team(uid)
            finally:
                system.shutdown(timeout=5)
                event_store.close()
            typer.echo(f"team {uid} stopped")

    @app.command("list")
    def list_(
        status: Annotated[
            str | None, typer.Option("--status", help="running, stopped or deleted.")
        ] = None,
        metadata: MetadataOption = None,
        user: Annotated[str | None, typer.Option("--user", help="Only this user's teams.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
        store: StoreOption = None,
        path: PathOption = None,
    ) -> None:
        """List teams, filtered by status, user and metadata (KEY=VALUE, all must match)."""
        from akgentic.team.models import TeamStatus

        with _errors():
            _import_roots(None, path)
            wanted: TeamStatus | None = None
            if status is not None:
                try:
                    wanted = TeamStatus(status.lower())
                except ValueError:
                    _fail(f"unknown status {status!r} (running, stopped, deleted)", 2)
            filters = _pairs(metadata, "--metadata")
            target = _store_url(store)
            if _missing_store(target) is not None:
                teams: list[Process] = []
            else:
                event_store = _open_store(target, must_exist=True)
                try:
                    teams = event_store.list_teams(user_id=user, status=wanted, metadata=filters)
                finally:
                    event_store.close()
            rows = [_summary(p) for p in teams]
            if as_json:
                typer.echo(json.dumps(rows, indent=2))
                return
            table = Table(title=f"teams ({len(rows)})")
            for column in ("team id", "name", "status", "user", "updated", "metadata"):
                table.add_column(column)
            for row in rows:
                meta = ", ".join(e.replace("|", "=", 1) for e in row["metadata_indexes"])
                table.add_row(
                    row["team_id"],
                    row["name"] or "",
                    row["status"],
                    row["user_id"],
                    row["updated_at"][:19],
                    meta,
                )
            Console().print(table)

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

        with _errors():
            _import_roots(None, path)
            uid = _team_id(team_id)
            event_store = _open_store(store, must_exist=True)
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
    ) -> None:
        """Delete a stopped team: its record, events and agent states."""
        from akgentic.core.actor_system import ActorSystem
        from akgentic.team.manager import TeamManager

        with _errors():
            _import_roots(None, path)
            uid = _team_id(team_id)
            event_store = _open_store(store, must_exist=True)
            system = ActorSystem()
            try:
                TeamManager(system, event_store).delete_team(uid)
            finally:
                system.shutdown(timeout=5)
                event_store.close()
            typer.echo(f"team {uid} deleted")

    return app


def _print_inspect(process: Process, log: list[Any], events: bool, as_json: bool) -> None:
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
            "sender": stored.event.sender.name if stored.event.sender is not None else None,
            "summary": _describe(stored.event),
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
            table.add_row(str(row["sequence"]), row["type"], row["sender"] or "", row["summary"])
        console.print(table)


def _describe(message: Any) -> str:
    from akgentic.core.messages.orchestrator import SentMessage

    if isinstance(message, SentMessage):
        inner = message.message
        text = getattr(inner, "content", "")
        return f"{type(inner).__name__} -> {message.recipient.name}: {str(text)[:60]}"
    content = getattr(message, "content", None)
    return str(content)[:80] if content is not None else ""


def _main() -> None:  # pragma: no cover - exercised through subprocesses
    from akgentic.cli.store_cmd import store_app

    root = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True)
    root.add_typer(team_app(), name="team")
    root.add_typer(store_app(), name="store")
    root(prog_name="akgentic")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    _main()
