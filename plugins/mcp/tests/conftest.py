"""What the MCP plugin's tests share: the test server, written once as a script.

The server's source lives in ``mcp_server_source.py`` (a string, not a test module);
the tests run the script with ``sys.executable``, over stdio without an argument or
over streamable HTTP on 127.0.0.1 with a port.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from akgentic.testing import wait_until

_SOURCE = Path(__file__).with_name("mcp_server_source.py")


def _server_source() -> str:
    # Loaded by path: with --import-mode=importlib a test directory is not importable.
    spec = importlib.util.spec_from_file_location("mcp_server_source", _SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source: str = module.SERVER_SOURCE
    return source


@pytest.fixture(scope="session")
def server_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test MCP server as a file; every child of the session runs this one copy."""
    script = tmp_path_factory.mktemp("mcp-server") / "server.py"
    script.write_text(_server_source())
    return script


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def _serving(script: Path, port: int) -> Iterator[None]:
    child = subprocess.Popen(
        [sys.executable, str(script), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: child.poll() is not None or _listening(port), timeout=120)
        if child.poll() is not None:
            raise RuntimeError(f"the MCP HTTP server exited with {child.returncode}")
        yield
    finally:
        child.terminate()
        child.wait(10)


@pytest.fixture(scope="session")
def http_server(server_script: Path) -> Callable[[int], AbstractContextManager[None]]:
    """``with http_server(port):`` the test server over streamable HTTP, listening on ``port``.

    Entering raises RuntimeError when the server exits before it listens and
    AssertionError when it does not listen within two minutes.
    """
    return lambda port: _serving(server_script, port)
