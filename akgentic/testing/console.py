"""Console test helpers: a console served from a thread, and a reader of its event stream.

Needs the console's web libraries and ``httpx`` (the ``dev`` extra).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from akgentic.console.server import ConsoleThread, open_console
from akgentic.team.urls import open_event_store
from akgentic.testing.waiting import poll_until

__all__ = ["ServeProcess", "StreamReader", "running_console"]


@contextmanager
def running_console(
    store_url: str,
    *,
    token: str | None = None,
    host: str = "127.0.0.1",
    allow_host_processes: bool = False,
    origin: str | None = None,
) -> Iterator[tuple[ConsoleThread, httpx.Client]]:
    """A console over ``store_url`` served from a thread, and a client carrying its token.

    Without ``token`` the console generates one; it is in ``server.token`` (and
    ``server.page_url`` is the URL a browser opens).
    """
    with open_console(
        open_event_store(store_url),
        host=host,
        token=token,
        allow_host_processes=allow_host_processes,
        origin=origin,
    ) as console:
        headers = {"Authorization": f"Bearer {console.token}"}
        with (
            ConsoleThread(console.app, before_exit=console.close_streams) as server,
            httpx.Client(base_url=server.url, headers=headers, timeout=60) as client,
        ):
            server.console = console
            server.token = console.token
            yield server, client


class StreamReader:
    """Reads a team's event stream on a thread; rows arrive in :attr:`rows`."""

    def __init__(self, client: httpx.Client, team_id: str) -> None:
        self.rows: queue.Queue[dict[str, Any]] = queue.Queue()
        self.connected = threading.Event()
        self._client = client
        self._team_id = team_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self.connected.wait(30):
            raise AssertionError("the stream did not connect")

    def _read(self) -> None:
        try:
            self._read_lines()
        except httpx.HTTPError:
            if not self._stop.is_set():
                raise

    def _read_lines(self) -> None:
        with self._client.stream("GET", f"/api/teams/{self._team_id}/stream") as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith(": connected"):
                    self.connected.set()
                if line.startswith("data: "):
                    self.rows.put(json.loads(line[len("data: ") :]))
                if self._stop.is_set():
                    return

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 60
    ) -> dict[str, Any]:
        """The first row (from now on) for which ``match`` is true; fails after ``timeout``."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching row arrived on the stream in time")
            try:
                row = self.rows.get(timeout=left)
            except queue.Empty:
                continue
            if match(row):
                return row

    def close(self) -> None:
        self._stop.set()


class ServeProcess:
    """``akgentic serve`` as a child process on a free loopback port (``with`` block).

    ``args`` are added to the command line; the process's stderr (where the URL
    and any generated token are printed) is kept in :attr:`output` once it ended,
    and read live by :meth:`wait_for_output`. Once started, :attr:`token` is the
    token the console requires (the generated one read from the printed URL, or
    the one given by ``--token`` / ``$AKGENTIC_CONSOLE_TOKEN``), :attr:`page_url`
    the URL a browser opens, and :meth:`client` an HTTP client carrying it.
    """

    def __init__(self, store_url: str, cwd: str, *args: str, env: dict[str, str] | None = None):
        import os
        import socket
        import sys

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.command = [
            sys.executable,
            "-m",
            "akgentic.cli",
            "serve",
            "--store",
            store_url,
            "--port",
            str(self.port),
            *args,
        ]
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.cwd = cwd
        self.output = ""
        self._lines: queue.Queue[str] = queue.Queue()
        self.process: Any = None
        self.token: str | None = None

    def __enter__(self) -> ServeProcess:
        import subprocess

        self.process = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._pumping = threading.Thread(target=self._pump, daemon=True)
        self._pumping.start()
        try:
            if not poll_until(self._answers, 60, interval=0.1):
                raise AssertionError("akgentic serve did not answer within 60 s")
            self.token = self._given_token() or self._printed_token()
        except BaseException:
            self.__exit__()  # no ``with`` body runs: stop the server and close its pipe here
            raise
        return self

    def _answers(self) -> bool:
        """Whether the console serves a page; fails the test if the process ended."""
        if self.process.poll() is not None:
            raise AssertionError(f"akgentic serve exited early: {self.output}")
        try:
            httpx.get(self.url + "static/console.css", timeout=2)
        except httpx.TransportError:
            return False
        return True

    def _given_token(self) -> str | None:
        if "--token" in self.command:
            return str(self.command[self.command.index("--token") + 1])
        return self.env.get("AKGENTIC_CONSOLE_TOKEN")

    def _printed_token(self) -> str:
        from urllib.parse import parse_qs, urlsplit

        line = self.wait_for_output("?token=")
        url = line.split("open ", 1)[1].strip()
        return parse_qs(urlsplit(url).query)["token"][0]

    @property
    def page_url(self) -> str:
        """The URL to open in a browser: the page with the token (it sets the cookie)."""
        from urllib.parse import quote

        return f"{self.url}?token={quote(self.token or '', safe='')}"

    def client(self) -> httpx.Client:
        """An HTTP client on the console carrying its token (close it after use)."""
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    def _pump(self) -> None:
        for line in self.process.stderr:
            self.output += line
            self._lines.put(line)

    def wait_for_output(self, text: str, timeout: float = 30) -> str:
        """The first line of the process's stderr containing ``text``."""
        import time

        deadline = time.monotonic() + timeout
        for line in self.output.splitlines():
            if text in line:
                return line
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if text in line:
                return line
        raise AssertionError(f"{text!r} never printed; output: {self.output}")

    def __exit__(self, *exc: object) -> None:
        import signal
        import subprocess

        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        # The pump reads stderr to its end (the process is gone): then it can be closed.
        self._pumping.join(10)
        self.process.stderr.close()
