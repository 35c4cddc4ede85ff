"""Printing tables whose cells must survive a pipe whole (team ids above all)."""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

__all__ = ["print_table"]


def print_table(table: Table) -> None:
    """Print ``table`` on stdout; into a pipe or a file, as wide as its content needs.

    Rich lays a table out in 80 columns when stdout is not a terminal, cutting cells
    with an ellipsis; an id cut that way cannot be pasted into the next command.
    """
    console = Console()
    if not console.is_terminal:
        needed = Measurement.get(console, console.options.update_width(10_000), table).maximum
        console = Console(width=max(console.width, needed))
    console.print(table)
