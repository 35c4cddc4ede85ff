"""Hook implementations of the hello plugin."""

from __future__ import annotations

import typer

from akgentic.plugins import hookimpl


@hookimpl
def akgentic_cli(app: typer.Typer) -> None:
    """Add ``akgentic hello [NAME]``."""

    @app.command("hello")
    def hello(name: str = typer.Argument("world", help="Who to greet.")) -> None:
        """Greet someone: the smallest possible plugin command."""
        typer.echo(f"Hello, {name}!")
