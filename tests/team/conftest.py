"""Shared fixtures for the team persistence tests: cards, records and stores under tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.builtin import sqlite_store, yaml_store
from akgentic.core import AgentCard, BaseConfig
from akgentic.plugins import PluginHost, PluginInfo
from akgentic.team import EventStore, SqliteEventStore, YamlEventStore

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
