"""``akgentic plugins``: what is installed, what loaded, what failed and why."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from akgentic.plugins import PluginError, get_host

__all__ = ["plugins_command"]

_STATUS_STYLE = {"loaded": "green", "disabled": "yellow", "failed": "red", "conflict": "magenta"}


def plugins_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False,
) -> None:
    """List every plugin: name, distribution, version, status, hooks and what it provides."""
    host = get_host()
    try:
        host.registry.provides()
    except PluginError as exc:  # strict mode: a hook failure is fatal
        Console(stderr=True).print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(1) from exc
    infos = host.plugins()
    if as_json:
        sys.stdout.write(json.dumps([info.as_json() for info in infos], indent=2) + "\n")
        return
    table = Table(title="akgentic plugins")
    for column in ("name", "distribution", "version", "built-in", "status", "hooks", "provides"):
        table.add_column(column)
    for info in infos:
        provides = "; ".join(
            f"{kind}: {', '.join(names)}" for kind, names in info.provides.items() if names
        )
        status = f"[{_STATUS_STYLE[info.status]}]{info.status}[/]"
        if info.error:
            status += f"\n{info.error}"
        table.add_row(
            info.name,
            info.distribution,
            info.version,
            "yes" if info.builtin else "",
            status,
            ", ".join(h.removeprefix("akgentic_") for h in info.hooks),
            provides,
        )
    Console().print(table)
