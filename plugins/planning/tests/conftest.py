"""Fixtures of the planning tests: a real actor system with an orchestrator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from akgentic.testing.tool_team import TeamObserver, ToolTeam

__all__ = ["Team", "TeamObserver"]

Team = ToolTeam


@pytest.fixture
def team() -> Iterator[ToolTeam]:
    """A fresh team, shut down after the test."""
    made = ToolTeam()
    yield made
    made.shutdown()
