"""Assembly of the root Typer application."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

from akgentic.cli.plugins_cmd import plugins_command
from akgentic.plugins import PluginError, get_host

__all__ = ["build_app", "main"]


def build_app() -> typer.Typer:
    """The root application with kernel commands and every plugin's commands."""
    app = typer.Typer(
        name="akgentic",
        help="Run and manage akgentic agent teams.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_root)
    app.command("plugins")(plugins_command)

    from akgentic.cli.demo_cmd import demo_command
    from akgentic.cli.run_cmd import run_command
    from akgentic.cli.serve_cmd import serve_command

    app.command("demo")(demo_command)
    app.command("run")(run_command)
    app.command("serve")(serve_command)

    from akgentic.cli.cluster_cmd import cluster_app
    from akgentic.cli.sandbox_cmd import sandbox_app
    from akgentic.cli.store_cmd import store_app
    from akgentic.cli.team_cmd import team_app
    from akgentic.cli.vector_cmd import vector_app
    from akgentic.tool.cli import cards_app

    app.add_typer(team_app(), name="team")
    app.add_typer(store_app(), name="store")
    app.add_typer(cards_app(), name="cards")
    app.add_typer(sandbox_app(), name="sandbox")
    app.add_typer(cluster_app(), name="cluster")
    # A kernel command: it walks every installed backend's cluster, so disabling the
    # in-memory plugin must not remove it.
    app.add_typer(vector_app(), name="vector")
    get_host().registry.extend_cli(app)
    return app


def _print_version(asked: bool) -> None:
    if asked:
        from akgentic import __version__

        typer.echo(__version__)
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the kernel version and exit (as `akgentic version` does).",
        ),
    ] = False,
) -> None:
    """Run and manage akgentic agent teams."""


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``akgentic`` console script."""
    try:
        app = build_app()
    except PluginError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(1)
    app(args=argv, prog_name="akgentic")
