"""``akgentic cards``: list installed tool cards and print their configuration schema.

The root CLI mounts this group with ``app.add_typer(cards_app(), name="cards")``.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from akgentic.plugins import PluginError
from akgentic.tool.core.catalog import card_json_schema, describe_cards

__all__ = ["cards_app"]


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(1)


def cards_app() -> typer.Typer:
    """The ``cards`` command group (listing by default, ``schema NAME`` for one card)."""
    app = typer.Typer(
        name="cards",
        help="Installed tool cards: list them, or print one card's JSON Schema.",
        invoke_without_command=True,
        no_args_is_help=False,
        add_completion=False,
    )

    @app.callback()
    def list_cards(
        context: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
    ) -> None:
        """List every installed card with its description, plugin, capabilities and channels."""
        if context.invoked_subcommand is not None:
            return
        try:
            infos = describe_cards()
        except (PluginError, TypeError) as error:
            raise _fail(str(error)) from error
        if as_json:
            sys.stdout.write(json.dumps([info.as_dict() for info in infos], indent=2) + "\n")
            return
        table = Table(title="akgentic tool cards")
        for column in ("name", "description", "class", "plugin", "capabilities", "channels"):
            table.add_column(column)
        for info in infos:
            capabilities = ", ".join(
                cap.name if cap.default_on else f"{cap.name} (off)" for cap in info.capabilities
            )
            plugin = info.plugin or ""
            if info.distribution:
                plugin += f" ({info.distribution})"
            table.add_row(
                info.name,
                info.description,
                info.card_class,
                plugin,
                capabilities,
                ", ".join(channel.value for channel in info.channels),
            )
        Console().print(table)

    @app.command("schema")
    def schema(name: Annotated[str, typer.Argument(help="Registered card name.")]) -> None:
        """Print the JSON Schema of a card's YAML mapping (``card: NAME`` plus fields)."""
        try:
            document = card_json_schema(name)
        except (PluginError, TypeError, ValueError) as error:
            raise _fail(str(error)) from error
        sys.stdout.write(json.dumps(document, indent=2) + "\n")

    return app
