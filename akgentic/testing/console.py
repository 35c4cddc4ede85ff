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

__all__ = ["StreamReader", "running_console"]


@contextmanager
def running_console(
    store_url: str, *, token: str | None = None, host: str = "127.0.0.1"
) -> Iterator[tuple[ConsoleThread, httpx.Client]]:
    """A console over ``store_url`` served from a thread, and a client on it."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with (
        open_console(open_event_store(store_url), host=host, token=token) as console,
        ConsoleThread(console.app, before_exit=console.close_streams) as server,
        httpx.Client(base_url=server.url, headers=headers, timeout=60) as client,
    ):
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
