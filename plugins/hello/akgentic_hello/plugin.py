"""Hook implementations of the hello plugin: a CLI command and the ``shout`` tool card."""

from __future__ import annotations

from collections.abc import Iterable

import typer

from akgentic.plugin_api import ToolCardSpec, hookimpl


@hookimpl
def akgentic_cli(app: typer.Typer) -> None:
    """Add ``akgentic hello [NAME]``."""

    @app.command("hello")
    def hello(name: str = typer.Argument("world", help="Who to greet.")) -> None:
        """Greet someone: the smallest possible plugin command."""
        typer.echo(f"Hello, {name}!")


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register :class:`~akgentic_hello.shout.ShoutTool` as the ``shout`` card."""
    from akgentic_hello.shout import ShoutTool  # when the hook runs, not at discovery

    return [ToolCardSpec(name="shout", card=ShoutTool, description="Shout a text, loudly.")]
