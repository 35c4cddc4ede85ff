"""``akgentic store``: prepare an event store named by URL."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

__all__ = ["store_app"]


def store_app() -> typer.Typer:
    """The ``store`` command group."""
    app = typer.Typer(help="Prepare event stores.", no_args_is_help=True)

    @app.command("init")
    def init(
        url: Annotated[str, typer.Argument(help="Store URL, e.g. sqlite:///.akgentic/akgentic.db")],
    ) -> None:
        """Create the store's schema (tables, directories) if missing; safe to run again."""
        from akgentic.plugins import PluginError, UnknownPluginNameError, get_host
        from akgentic.team.errors import EventStoreError, UnknownStoreSchemeError
        from akgentic.team.urls import store_scheme

        err = Console(stderr=True)
        try:
            scheme = store_scheme(url)
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
        except (EventStoreError, UnknownPluginNameError, ValueError) as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False)
            raise typer.Exit(2) from None
        except PluginError as exc:  # two plugins claiming the scheme: the installation
            err.print(f"[red]error:[/red] {exc}", highlight=False)
            raise typer.Exit(1) from None
        Console().print(f"store ready: {url}", highlight=False)

    return app
