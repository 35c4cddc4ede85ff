"""``akgentic serve``: the web console over one event store (see :mod:`akgentic.console`)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from akgentic.cli.session import PathOption, StoreOption, cli_errors, err_console, fail

__all__ = ["serve_command"]


def serve_command(
    store: StoreOption = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (off loopback a token is required).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.", min=0, max=65535)] = 8765,
    path: PathOption = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help="Token every request must carry (default: $AKGENTIC_CONSOLE_TOKEN; "
            "generated off loopback).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the web console: list, create, watch and talk to the teams of a store."""
    with cli_errors():
        try:
            import fastapi  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError:
            fail("the console needs its web libraries: pip install 'akgentic[console]'", 1)
        from akgentic.cli.session import import_roots, open_store, store_url
        from akgentic.console.security import resolve_token
        from akgentic.console.server import open_console, run_server

        import_roots(None, path)
        try:
            required, generated = resolve_token(host, token, os.environ)
        except ValueError as exc:
            fail(str(exc), 2)
        event_store = open_store(store, must_exist=False)
        with open_console(event_store, host=host, token=required) as console:
            shown = "localhost" if host in ("127.0.0.1", "::1") else host
            base = f"http://{shown}:{port}/"
            err_console.print(f"akgentic console for {store_url(store)}", soft_wrap=True)
            if required is None:
                err_console.print(f"open {base}", soft_wrap=True)
            elif generated:
                err_console.print(f"token (generated): {required}", soft_wrap=True)
                err_console.print(f"open {base}?token={required}", soft_wrap=True)
            else:
                err_console.print(f"open {base}?token=<your token>", soft_wrap=True)
            run_server(console.app, host, port, console.close_streams)
