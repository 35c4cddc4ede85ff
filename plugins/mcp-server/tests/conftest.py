"""Fixtures of the mcp-server tests: the example team served by a child, over stdio or HTTP.

Every child runs in the test's ``tmp_path`` on an SQLite store there, writes its log to
``errlog``, and imports agent classes from ``examples/`` (where ``replier_team`` lives).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from akgentic_mcp_server.testing import SyncClient, connect, http_child, stdio_session

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

Serve = Callable[..., AbstractContextManager[SyncClient]]


@pytest.fixture
def card() -> Path:
    """The example team: ``@Replier`` echoes, asks a question back, notes answers."""
    return EXAMPLES / "replier-team.yaml"


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/mcp.db"


@pytest.fixture
def errlog(tmp_path: Path) -> Path:
    """Where the children write their log (their stderr)."""
    return tmp_path / "server.log"


@pytest.fixture
def serve_stdio(tmp_path: Path, store: str, errlog: Path, card: Path) -> Serve:
    """``with serve_stdio(team=card, tasks=False) as client:`` over stdio, stopped on leaving."""

    def serving(team: str | None = None, tasks: bool = False) -> AbstractContextManager[SyncClient]:
        return stdio_session(team or str(card), store, tmp_path, errlog, EXAMPLES, tasks=tasks)

    return serving


@pytest.fixture
def serve_http(tmp_path: Path, store: str, errlog: Path, card: Path) -> Serve:
    """``with serve_http(team=card) as client:`` over streamable HTTP, SIGTERM on leaving."""

    @contextmanager
    def serving(team: str | None = None, tasks: bool = False) -> Iterator[SyncClient]:
        with (
            http_child(team or str(card), store, tmp_path, errlog, EXAMPLES) as url,
            connect(url, tasks) as client,
        ):
            yield client

    return serving
