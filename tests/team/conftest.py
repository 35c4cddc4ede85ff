"""Shared fixtures for the team persistence tests: cards, records and stores under tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest

from akgentic.builtin import sqlite_store, yaml_store
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.plugins import PluginHost, PluginInfo
from akgentic.team import (
    EventStore,
    SqliteEventStore,
    TeamCard,
    TeamManager,
    YamlEventStore,
)
from akgentic.testing.waiting import wait_until

MakeAgentCard = Callable[..., AgentCard]


@pytest.fixture
def agent_card() -> MakeAgentCard:
    """Build an AgentCard for a plain Akgent with the given name and role."""

    def make(name: str, role: str | None = None, **fields: Any) -> AgentCard:
        return AgentCard(
            agent_class="akgentic.core.agent.Akgent",
            description=f"{name} agent",
            config=BaseConfig(name=name, role=role or name.strip("@")),
            **fields,
        )

    return make


@pytest.fixture(params=["sqlite", "yaml"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """Each built-in store in turn, on fresh storage under tmp_path."""
    store: EventStore
    if request.param == "sqlite":
        store = SqliteEventStore(tmp_path / "akgentic.db")
    else:
        store = YamlEventStore(tmp_path / "teams")
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def store_plugins(
    plugin_host: PluginHost, register_plugin: Callable[..., PluginInfo]
) -> PluginHost:
    """An isolated plugin host in which the two built-in store plugins are registered."""
    register_plugin(sqlite_store, "sqlite")
    register_plugin(yaml_store, "yaml")
    return plugin_host


# ---------------------------------------------------------------- team lifecycle

SUPPORT_DIR = Path(__file__).parent / "support"
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
if str(SUPPORT_DIR) not in sys.path:
    sys.path.insert(0, str(SUPPORT_DIR))


@pytest.fixture
def wait_for() -> Callable[..., None]:
    """``wait_for(predicate, timeout=10.0)``: bounded wait on a condition."""
    return wait_until


@pytest.fixture
def actor_system() -> Iterator[ActorSystem]:
    """An ActorSystem; every actor is stopped after the test."""
    system = ActorSystem()
    yield system
    system.shutdown(timeout=10)
    pykka.ActorRegistry.stop_all(block=True, timeout=10)


@pytest.fixture
def manager(actor_system: ActorSystem, any_store: EventStore) -> Iterator[TeamManager]:
    """A TeamManager on each built-in store in turn; its teams are stopped afterwards."""
    team_manager = TeamManager(actor_system, any_store)
    yield team_manager
    team_manager.stop_all()


@pytest.fixture
def sqlite_manager(actor_system: ActorSystem, tmp_path: Path) -> Iterator[TeamManager]:
    """A TeamManager on a SQLite store only (for tests whose subject is not the store)."""
    store = SqliteEventStore(tmp_path / "one.db")
    team_manager = TeamManager(actor_system, store)
    yield team_manager
    team_manager.stop_all()
    store.close()


def _member(cls: str, name: str, role: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "card": {
            "agent_class": f"team_test_agents.{cls}",
            "description": f"{name} agent",
            "config": {"name": name, "role": role or name.strip("@#")},
        },
        **fields,
    }


@pytest.fixture
def team_card() -> Callable[..., TeamCard]:
    """``team_card(members=..., **fields)``: an ``@Entry`` + ``@Echo`` card by default."""

    def make(members: list[dict[str, Any]] | None = None, **fields: Any) -> TeamCard:
        data: dict[str, Any] = {
            "name": "test-team",
            "entry_point": _member("Echo", "@Entry", "Entry"),
            "members": members if members is not None else [_member("Echo", "@Echo")],
            "message_types": ["akgentic.core.messages.message.UserMessage"],
            **fields,
        }
        return TeamCard.model_validate(data)

    return make


@pytest.fixture
def member() -> Callable[..., dict[str, Any]]:
    """``member(cls, name, role=None, headcount=..., members=[...])`` as card data."""
    return _member


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """Environment for CLI subprocesses: test agents importable, store under tmp_path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SUPPORT_DIR), env.get("PYTHONPATH", "")) if p
    )
    env["AKGENTIC_STORE"] = f"sqlite:///{tmp_path}/cli.db"
    env.pop("ORCHESTRATOR_TIMEOUT_DELAY", None)
    return env


@pytest.fixture
def run_cli(
    cli_env: dict[str, str], tmp_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``akgentic <args>`` (team and store groups) in a subprocess, cwd = tmp_path."""

    def run(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "akgentic.cli.team_cmd", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=cli_env,
            cwd=tmp_path,
            timeout=timeout,
        )

    return run


@pytest.fixture
def examples_dir() -> Path:
    """The repository's examples/ directory."""
    return EXAMPLES_DIR
