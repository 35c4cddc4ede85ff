"""Fixtures for the testing-kit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server
