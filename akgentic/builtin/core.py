"""The ``core`` built-in plugin: what the kernel itself contributes.

It is essential (it cannot be disabled): it registers the kernel's own CLI
commands' companions and, once the actor core is present, its persisted message
types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic.plugins import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def akgentic_cli(app: typer.Typer) -> None:
    """Add ``akgentic version``."""

    @app.command("version")
    def version() -> None:
        """Print the kernel version."""
        from akgentic import __version__

        typer.echo(__version__)
