"""Test kit of the mcp-server plugin: a served team as a child process, the real SDK client.

:func:`stdio_session` starts ``python -m akgentic.cli mcp serve TEAM`` through the SDK's
stdio client; :func:`http_child` starts it with ``--http 127.0.0.1:PORT`` (then
:func:`connect` to its URL). Both give a :class:`SyncClient`: the async ``mcp.Client``
driven from a blocking portal, so tests (and ``bench/protocols/mcp_latency.py``) stay plain
functions that can ``wait_until``. Children get this process's import path. With
``tasks=True`` the client declares the tasks extension
(:class:`~akgentic_mcp_server.task_client.TasksClient`) and :class:`SyncClient` drives
tasks by hand (``start_task``, ``get_task``, ``task_result``, ``cancel_task``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio.from_thread
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import CallToolResult, TextResourceContents

from akgentic.testing.waiting import wait_until
from akgentic_mcp_server import task_client
from akgentic_mcp_server.tasks import CreateTaskResult, GetTaskResult

__all__ = [
    "SyncClient",
    "child_env",
    "connect",
    "free_port",
    "http_child",
    "serve_args",
    "stdio_session",
]


class SyncClient:
    """An entered ``mcp.Client``, called from synchronous code through ``portal``."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def call(self, tool: str, arguments: dict[str, Any] | None = None, **kw: Any) -> CallToolResult:
        """Call ``tool``; ``kw`` goes to ``Client.call_tool`` (``progress_callback``...)."""

        async def call() -> CallToolResult:
            return await self.client.call_tool(tool, arguments or {}, **kw)

        return self.portal.call(call)

    @staticmethod
    def text(result: CallToolResult) -> str:
        """The text of a tool result's first content block."""
        first = result.content[0]
        assert first.type == "text", first
        return first.text

    def read(self, uri: str) -> Any:
        """A JSON resource, decoded."""
        contents = self.portal.call(self.client.read_resource, uri).contents
        assert isinstance(contents[0], TextResourceContents)
        return json.loads(contents[0].text)

    def resources(self) -> list[str]:
        listed = self.portal.call(self.client.list_resources)
        return sorted(str(r.uri) for r in listed.resources)

    def tools(self) -> list[str]:
        listed = self.portal.call(self.client.list_tools)
        return sorted(t.name for t in listed.tools)

    # -- tasks (a client connected with ``tasks=True``) ----------------------------------
    def start_task(self, tool: str, arguments: dict[str, Any]) -> CreateTaskResult | CallToolResult:
        """Call ``tool`` and keep what came back: a task, or a result (a refusal)."""

        async def call() -> Any:
            return await self.client.session.call_tool(tool, arguments, allow_claimed=True)

        result = self.portal.call(call)
        assert isinstance(result, CreateTaskResult | CallToolResult), result
        return result

    def get_task(self, task_id: str, progress: ProgressFnT | None = None) -> GetTaskResult:
        return self.portal.call(task_client.get_task, self.client.session, task_id, progress)

    def task_result(self, task_id: str, progress: ProgressFnT | None = None) -> CallToolResult:
        return self.portal.call(task_client.task_result, self.client.session, task_id, progress)

    def cancel_task(self, task_id: str) -> GetTaskResult:
        return self.portal.call(task_client.cancel_task, self.client.session, task_id)


def child_env() -> dict[str, str]:
    """What a child adds to its environment: this process's import path."""
    return {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def serve_args(team: str, store: str, *paths: Path) -> list[str]:
    """The interpreter arguments of ``akgentic mcp serve TEAM --store STORE [--path P]...``."""
    args = ["-m", "akgentic.cli", "mcp", "serve", team, "--store", store]
    for path in paths:
        args += ["--path", str(path)]
    return args


@contextmanager
def connect(server: Any, tasks: bool = False) -> Iterator[SyncClient]:
    """A :class:`SyncClient` on ``server`` (a URL, ``StdioServerParameters`` or a transport).

    ``tasks`` declares the tasks extension, so ``ask`` and ``answer`` run as tasks.
    """
    extensions = [task_client.TasksClient()] if tasks else None
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server, extensions=extensions)) as client,
    ):
        yield SyncClient(portal, client)


class _StdioTransport:
    """The SDK's stdio transport with the child's stderr sent to ``errlog``."""

    def __init__(self, params: StdioServerParameters, errlog: TextIO) -> None:
        self._cm = stdio_client(params, errlog=errlog)

    async def __aenter__(self) -> Any:
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._cm.__aexit__(*exc)


@contextmanager
def stdio_session(
    team: str, store: str, cwd: Path, errlog: Path, *paths: Path, tasks: bool = False
) -> Iterator[SyncClient]:
    """``akgentic mcp serve TEAM`` over stdio; leaving closes its input, which stops the team."""
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(team, store, *paths), env=child_env(), cwd=cwd
    )
    with errlog.open("a") as log, connect(_StdioTransport(params, log), tasks) as client:
        yield client


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def http_child(team: str, store: str, cwd: Path, errlog: Path, *paths: Path) -> Iterator[str]:
    """``akgentic mcp serve TEAM --http 127.0.0.1:PORT`` as a child; yields its URL.

    Leaving sends SIGTERM (what ``akgentic team stop`` sends) and checks that the child
    exits 0 (it stops the team first).
    """
    port = free_port()
    with errlog.open("a") as log:
        child = subprocess.Popen(
            [sys.executable, *serve_args(team, store, *paths), "--http", f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd=cwd,
            env={**os.environ, **child_env()},
        )
        try:
            wait_until(lambda: child.poll() is not None or _listening(port), timeout=120)
            assert child.poll() is None, f"the server exited with {child.returncode}"
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            child.terminate()
            code = child.wait(60)
    assert code == 0, errlog.read_text()
