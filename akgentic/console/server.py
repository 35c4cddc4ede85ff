"""Running the console: a team manager over one store, the app, uvicorn.

:func:`open_console` builds everything and tears it down (every team the console
runs is stopped, the actor system shut down, the store closed);
:func:`run_server` serves the app in the calling thread until interrupted, and
:class:`ConsoleThread` serves it from a background thread (tests, benchmarks).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from akgentic.console.hub import ConsoleHub
from akgentic.console.security import check_token, is_loopback, new_token
from akgentic.console.service import ConsoleService

if TYPE_CHECKING:
    from akgentic.team.store import EventStore

__all__ = ["DEFAULT_EXAMPLES", "ConsoleThread", "open_console", "run_server"]

#: The repository's example cards, when the package runs from a checkout.
DEFAULT_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class Console:
    """A console ready to serve: the service and the ASGI app behind its guard."""

    service: ConsoleService
    app: Any
    token: str

    def close_streams(self) -> None:
        """End the open event streams, so the server can stop without waiting on them."""
        self.service.hub.close_streams()


@contextmanager
def open_console(
    store: EventStore,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    examples_dir: Path | None = DEFAULT_EXAMPLES,
    idle_delay: float | None = None,
    allow_host_processes: bool | None = None,
    origin: str | None = None,
) -> Iterator[Console]:
    """A console over ``store``; on exit its teams are stopped and everything closed.

    Every request must carry ``token``; without one a random token is generated
    (read it from :attr:`Console.token`). ``allow_host_processes`` lets cards
    created through the console start host processes (see
    :mod:`akgentic.cluster.admission`; None reads ``$AKGENTIC_ALLOW_HOST_PROCESSES``).
    ``origin`` is the public origin a reverse proxy serves the console under
    (writes from it are accepted).
    """
    from akgentic.agent.session import shut_down
    from akgentic.console.app import create_app
    from akgentic.core.actor_system import ActorSystem
    from akgentic.team.manager import TeamManager

    token = new_token() if token is None else check_token(token)
    if allow_host_processes is None:
        from akgentic.cluster.admission import host_processes_allowed

        allow_host_processes = host_processes_allowed(os.environ)
    hub = ConsoleHub()
    system = ActorSystem()
    manager = TeamManager(system, store, subscribers=[hub], idle_delay=idle_delay)
    service = ConsoleService(manager, hub, examples_dir, allow_host_processes=allow_host_processes)
    try:
        app = create_app(service, token=token, loopback=is_loopback(host), origin=origin)
        yield Console(service, app, token)
    finally:
        shut_down(manager, system, store)


def _config(app: Any, host: str, port: int) -> Any:
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=3,
        lifespan="off",
    )


def _server(app: Any, host: str, port: int, before_exit: Callable[[], None] | None) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if before_exit is not None:
                before_exit()
            super().handle_exit(sig, frame)

    return Server(_config(app, host, port))


def run_server(
    app: Any, host: str, port: int, before_exit: Callable[[], None] | None = None
) -> None:
    """Serve ``app`` in this thread until Ctrl+C or SIGTERM (``before_exit`` runs first)."""
    _server(app, host, port, before_exit).run()


class ConsoleThread:
    """Serve an app from a daemon thread on a free loopback port (``with`` block)."""

    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        before_exit: Callable[[], None] | None = None,
    ) -> None:
        if port == 0:
            with socket.socket() as probe:
                probe.bind((host, 0))
                port = probe.getsockname()[1]
        self.host, self.port = host, port
        self.server = _server(app, host, port, before_exit)
        #: The :class:`Console` served, when the caller records it (tests, benchmarks).
        self.console: Console | None = None
        #: The token requests must carry, when the caller records it.
        self.token: str | None = None
        self._before_exit = before_exit
        self._thread = threading.Thread(target=self.server.run, name="console", daemon=True)

    @property
    def url(self) -> str:
        """The base URL, ending in ``/``."""
        return f"http://{self.host}:{self.port}/"

    @property
    def page_url(self) -> str:
        """The URL to open in a browser: the page with the token (sets the cookie)."""
        from urllib.parse import quote

        return f"{self.url}?token={quote(self.token, safe='')}" if self.token else self.url

    def __enter__(self) -> ConsoleThread:
        self._thread.start()
        pause = threading.Event()  # never set: a bounded pause between checks
        deadline = time.monotonic() + 30.0
        while not self.server.started and self._thread.is_alive() and time.monotonic() < deadline:
            pause.wait(0.02)
        if not self.server.started:
            raise RuntimeError("the console did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._before_exit is not None:
            self._before_exit()
        self.server.should_exit = True
        self._thread.join(10)
