"""``akgentic store``: prepare, check and repair an event store named by URL.

* ``init URL``: create the store's schema (tables, directories) if missing;
* ``check URL``: the store's own integrity check plus a read of every team,
  one line per team; exit 1 when anything is wrong;
* ``repair URL``: delete orphans (events or states of a team that has no
  record); other problems are listed, left alone, and make the exit code 1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from akgentic.team.store import EventStore
    from akgentic.team.stores.check import StoreReport

__all__ = ["store_app"]

UrlArgument = Annotated[str, typer.Argument(help="Store URL, e.g. sqlite:///.akgentic/akgentic.db")]


def _open(url: str) -> EventStore:
    from akgentic.cli.session import open_store

    return open_store(url, must_exist=True)


def _as_json(report: StoreReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "problems": report.problems,
        "teams": [
            {
                "team_id": str(team.team_id),
                "name": team.name,
                "status": team.status,
                "events": team.events,
                "states": team.states,
                "orphan": team.orphan,
                "problems": team.problems,
                "notes": team.notes,
            }
            for team in report.teams
        ],
    }


def _print_report(report: StoreReport, console: Console) -> None:
    for problem in report.problems:
        console.print(Text.assemble(("store", "red"), f": {problem}"))
    for team in report.teams:
        head = "ok     " if team.ok else "PROBLEM"
        label = f"{team.name or '(no record)'} {team.status or ''}".strip()
        line = f"{head} {team.team_id} {label}: {team.events} event(s), {team.states} state(s)"
        console.print(Text(line, style="" if team.ok else "red"))
        for text in [*team.problems, *team.notes]:
            console.print(Text(f"        {text}"))
    teams = len(report.teams)
    bad = sum(1 for team in report.teams if not team.ok)
    verdict = "no problem found" if report.ok else f"{bad} team(s) with problems"
    if report.problems:
        verdict += f", {len(report.problems)} store problem(s)"
    console.print(Text(f"{teams} team(s) checked: {verdict}"))


def store_app() -> typer.Typer:
    """The ``store`` command group."""
    app = typer.Typer(help="Prepare, check and repair event stores.", no_args_is_help=True)

    @app.command("init")
    def init(url: UrlArgument) -> None:
        """Create the store's schema (tables, directories) if missing; safe to run again."""
        from akgentic.cli.session import cli_errors, fail, store_path_problem
        from akgentic.plugins import UnknownPluginNameError, get_host
        from akgentic.team.errors import UnknownStoreSchemeError
        from akgentic.team.urls import store_scheme

        with cli_errors():
            scheme = store_scheme(url)
            problem = store_path_problem(url, must_exist=False)
            if problem is not None:
                fail(problem, 1)
            try:
                spec = get_host().registry.event_store_for_scheme(scheme)
            except UnknownPluginNameError as exc:
                raise UnknownStoreSchemeError(url, scheme, exc.available, exc.hint) from None
            if spec.init is not None:
                spec.init(url)
            else:  # a store without a schema step: opening it is the whole preparation
                store = spec.open(url)
                close = getattr(store, "close", None)
                if close is not None:
                    close()
        Console().print(f"store ready: {url}", highlight=False)

    @app.command("check")
    def check(
        url: UrlArgument,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
    ) -> None:
        """Run the store's integrity check and read every team; exit 1 if anything is wrong."""
        from akgentic.cli.session import cli_errors
        from akgentic.team.stores.check import check_store

        with cli_errors():
            store = _open(url)
            try:
                report = check_store(store)
            finally:
                store.close()
        if as_json:
            typer.echo(json.dumps(_as_json(report), indent=2))
        else:
            _print_report(report, Console(highlight=False, soft_wrap=True))
        if not report.ok:
            raise typer.Exit(1)

    @app.command("repair")
    def repair(url: UrlArgument) -> None:
        """Delete orphan events and states (of teams without a record); report the rest."""
        from akgentic.cli.session import cli_errors
        from akgentic.team.stores.check import check_store, repair_store

        console = Console(highlight=False, soft_wrap=True)
        with cli_errors():
            store = _open(url)
            try:
                removed = repair_store(store)
                report = check_store(store)
            finally:
                store.close()
        for team_id in removed:
            console.print(Text(f"removed orphan {team_id}"))
        console.print(Text(f"{len(removed)} orphan(s) removed"))
        if not report.ok:
            _print_report(report, console)
            console.print(Text("the problems left need a person: restore from a backup"))
            raise typer.Exit(1)

    return app
