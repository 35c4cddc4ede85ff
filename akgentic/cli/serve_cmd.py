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
        str,
        typer.Option(
            "--host", help="Address to bind (off loopback, put a TLS reverse proxy in front)."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.", min=0, max=65535)] = 8765,
    path: PathOption = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help="Token every request must carry (default: $AKGENTIC_CONSOLE_TOKEN, "
            "else a generated one, printed in the URL to open).",
            show_default=False,
        ),
    ] = None,
    allow_host_processes: Annotated[
        bool,
        typer.Option(
            "--allow-host-processes",
            help="Let cards created in the console start host processes outside a sandbox "
            "(stdio MCP servers); default: $AKGENTIC_ALLOW_HOST_PROCESSES, else refused.",
        ),
    ] = False,
    origin: Annotated[
        str | None,
        typer.Option(
            "--origin",
            help="Public origin a TLS reverse proxy serves the console under "
            "(https://console.example.com): writes from it are accepted.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the web console: list, create, watch and talk to the teams of a store."""
    with cli_errors():
        try:
            import fastapi  # noqa: F401 - only checks the console extra is installed
            import uvicorn  # noqa: F401 - only checks the console extra is installed
        except ImportError:
            fail("the console needs its web libraries: pip install 'akgentic[console]'", 1)
        from urllib.parse import quote

        from akgentic.cli.session import import_roots, open_store, store_url
        from akgentic.cluster.admission import host_processes_allowed
        from akgentic.console.security import resolve_token
        from akgentic.console.server import open_console, run_server

        import_roots(None, path)
        try:
            required, generated = resolve_token(token, os.environ)
        except ValueError as exc:
            fail(str(exc), 2)
        allowed = allow_host_processes or host_processes_allowed(os.environ)
        event_store = open_store(store, must_exist=False)
        if origin is not None and not origin.startswith(("https://", "http://")):
            fail(
                f"--origin must be an http(s) origin (https://console.example.com): {origin!r}",
                2,
            )
        with open_console(
            event_store, host=host, token=required, allow_host_processes=allowed, origin=origin
        ) as console:
            shown = "localhost" if host in ("127.0.0.1", "::1") else host
            base = f"http://{shown}:{port}/"
            err_console.print(f"akgentic console for {store_url(store)}", soft_wrap=True)
            if generated:
                err_console.print(f"open {base}?token={quote(required, safe='')}", soft_wrap=True)
            else:
                err_console.print(f"open {base}?token=<your token>", soft_wrap=True)
            if allowed:
                err_console.print(
                    "warning: cards created in this console may start host processes",
                    soft_wrap=True,
                )
            run_server(console.app, host, port, console.close_streams)
