"""Hook implementation of the mcp-server plugin: the ``akgentic mcp serve`` command.

The ``mcp`` SDK is imported only when the command runs, so discovering this plugin
costs Typer alone.
"""

from __future__ import annotations

from pathlib import Path

import typer

from akgentic.plugin_api import hookimpl


def serve_command(
    team: str = typer.Argument(
        ..., help="A team card file (starts a new team) or a stored team id (resumes it)."
    ),
    store: str | None = typer.Option(
        None,
        "--store",
        envvar="AKGENTIC_STORE",
        help="Event store URL (default: sqlite:///.akgentic/akgentic.db).",
    ),
    http: str | None = typer.Option(
        None,
        "--http",
        metavar="HOST:PORT",
        help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
    ),
    path: list[Path] | None = typer.Option(  # noqa: B008 - typer reads its defaults this way
        None, "--path", help="Also import agent classes from this directory (repeatable)."
    ),
) -> None:
    """Serve one team as an MCP server: tools ask, send, status, answer; resources
    conversation and members. Stdio by default; the team is stopped (and stays
    resumable) when the input ends or on SIGTERM."""
    from akgentic_mcp_server.server import parse_http, serve

    address = None
    if http is not None:
        try:
            address = parse_http(http)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--http") from None
    serve(team, store, address, path)


def mcp_app() -> typer.Typer:
    """The ``akgentic mcp`` group."""
    app = typer.Typer(
        help="Serve an akgentic team to MCP clients (IDEs, desktop assistants).",
        no_args_is_help=True,
    )
    app.command("serve")(serve_command)
    return app


@hookimpl
def akgentic_cli(app: typer.Typer) -> None:
    """Add ``akgentic mcp serve TEAM``."""
    app.add_typer(mcp_app(), name="mcp")
