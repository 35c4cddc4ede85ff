"""Fixtures of the vector tests: test agents on sys.path, actor systems, a team manager."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pykka
import pytest

from akgentic.core import ActorSystem
from akgentic.team import SqliteEventStore, TeamManager

SUPPORT_DIR = Path(__file__).parent / "support"
if str(SUPPORT_DIR) not in sys.path:
    sys.path.insert(0, str(SUPPORT_DIR))


@pytest.fixture
def actor_system() -> Iterator[ActorSystem]:
    """An ActorSystem; every actor is stopped after the test."""
    system = ActorSystem()
    yield system
    system.shutdown(timeout=10)
    pykka.ActorRegistry.stop_all(block=True, timeout=10)


@pytest.fixture
def event_store(tmp_path: Path) -> Iterator[SqliteEventStore]:
    """A SQLite event store under tmp_path."""
    store = SqliteEventStore(tmp_path / "teams.db")
    yield store
    store.close()


@pytest.fixture
def manager(actor_system: ActorSystem, event_store: SqliteEventStore) -> Iterator[TeamManager]:
    """A TeamManager on SQLite; its teams are stopped afterwards."""
    team_manager = TeamManager(actor_system, event_store)
    yield team_manager
    team_manager.stop_all()
