"""Fixtures of the PostgreSQL plugin tests: a real server, one fresh schema per test.

The server is ``$AKGENTIC_TEST_POSTGRES_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``). Each test gets its own schema,
named ``akt_<random>``, passed to the store through the ``schema=`` URL
parameter and dropped afterwards, so parallel or repeated runs never collide.
Without a reachable server the tests skip with the reason, except under
``CI=true`` where that is a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit
from uuid import uuid4

import psycopg
import pytest
from akgentic_postgres.store import init_schema
from psycopg import sql

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
SUPPORT_DIR = Path(__file__).parent / "support"
if str(SUPPORT_DIR) not in sys.path:  # agents a resumed team imports by dotted path
    sys.path.insert(0, str(SUPPORT_DIR))


def with_params(url: str, **params: str) -> str:
    """``url`` with query parameters added (or replaced)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


@pytest.fixture(scope="session")
def pg_server() -> str:
    """The URL of the test server, checked reachable once per session."""
    url = os.environ.get("AKGENTIC_TEST_POSTGRES_URL") or DEFAULT_URL
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = f"PostgreSQL test server {url} is unreachable: {str(exc).strip()}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: a missing service is a failure)")
        pytest.skip(reason)
    return url


@pytest.fixture
def pg_schema(pg_server: str) -> Iterator[str]:
    """A fresh schema name for this test; the schema (if created) is dropped afterwards."""
    name = f"akt_{uuid4().hex[:16]}"
    yield name
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@pytest.fixture
def pg_url(pg_server: str, pg_schema: str) -> str:
    """A store URL on this test's schema, not initialised yet."""
    return with_params(pg_server, schema=pg_schema)


@pytest.fixture
def initialised_url(pg_url: str) -> str:
    """A store URL on this test's schema, initialised and empty."""
    init_schema(pg_url)
    return pg_url


@pytest.fixture
def child_env() -> dict[str, str]:
    """Environment for child processes: the tests' support modules importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SUPPORT_DIR), env.get("PYTHONPATH", "")) if p
    )
    env.pop("AKGENTIC_STORE", None)
    return env


@pytest.fixture
def run_cli(
    child_env: dict[str, str], tmp_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``akgentic <args>`` in a subprocess (cwd = tmp_path)."""

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "akgentic.cli", *args],
            capture_output=True,
            text=True,
            env=child_env,
            cwd=tmp_path,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    return run
