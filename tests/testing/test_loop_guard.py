"""The loop guard fails the test that leaves an open event loop, and only that test."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from akgentic.testing.loop_guard import current_event_loop

_SUITE = """
import asyncio

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel


def _reply(messages, info):
    return ModelResponse(parts=[TextPart("hi")])


def test_run_sync_leaks():
    # pydantic-ai sets a new loop as the thread's current one and never closes it.
    assert Agent(FunctionModel(_reply)).run_sync("go").output == "hi"


def test_asyncio_run_closes_its_loop():
    assert asyncio.run(Agent(FunctionModel(_reply)).run("go")).output == "hi"


@pytest.fixture(scope="module")
def module_loop():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()


def test_a_module_fixtures_loop_is_not_the_tests(module_loop):
    assert not module_loop.is_closed()
"""


def test_the_guard_fails_the_leaking_test_only(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(_SUITE))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "akgentic.testing.loop_guard",
            "-p",
            "no:cacheprovider",
            "-W",
            "error",
            "test_suite.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "ERROR test_suite.py::test_run_sync_leaks" in out, out
    assert "left an open event loop as the thread's current loop" in out, out
    assert "3 passed, 1 error" in out, out  # the leak is closed: no later test pays for it


def test_current_event_loop_never_creates_one() -> None:
    async def nothing() -> None:
        return None

    asyncio.run(nothing())  # leaves no current loop
    assert current_event_loop() is None
    assert current_event_loop() is None
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        assert current_event_loop() is loop
    finally:
        asyncio.set_event_loop(None)
        loop.close()
