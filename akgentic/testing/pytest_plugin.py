"""The pytest plugin of akgentic (entry point ``pytest11: akgentic``).

Kept import-light: it is loaded by every pytest run in an environment where
akgentic is installed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.plugins import PluginHost, PluginInfo, use_host
from akgentic.testing.plugins import FakeDistributions

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager


@pytest.fixture
def plugin_host() -> Iterator[PluginHost]:
    """An empty plugin host (autoload off) installed as the process host for one test."""
    host = PluginHost(autoload=False, env={})
    with use_host(host):
        yield host


@pytest.fixture
def register_plugin(plugin_host: PluginHost) -> Iterator[Callable[..., PluginInfo]]:
    """Register inline plugins into ``plugin_host``; each is unregistered after the test."""
    names: list[str] = []

    def register(plugin: object, name: str | None = None) -> PluginInfo:
        plugin_name = name or getattr(plugin, "__name__", None) or f"inline-{len(names)}"
        info = plugin_host.register(plugin, plugin_name)
        names.append(plugin_name)
        return info

    yield register
    for name in reversed(names):
        plugin_host.unregister(name)


@pytest.fixture
def fake_distributions(tmp_path: Path) -> Iterator[FakeDistributions]:
    """Fake pip-installed distributions with entry points (see FakeDistributions)."""
    # A unique folder name: stevedore caches entry points on disk keyed by path names
    # and coarse mtimes, so a reused pytest tmp path could serve a stale listing.
    fakes = FakeDistributions(tmp_path / f"site-{uuid.uuid4().hex}")
    try:
        yield fakes
    finally:
        fakes.close()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started scripted OpenAI-compatible server on 127.0.0.1 (empty script; add steps)."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def team_manager(tmp_path: Path) -> Iterator[TeamManager]:
    """A ``TeamManager`` on its own actor system and a YAML store under ``tmp_path``.

    Every team it still runs is stopped after the test, then the system and store close.
    """
    from akgentic.core import ActorSystem
    from akgentic.team import TeamManager, open_event_store

    system = ActorSystem()
    store = open_event_store(f"yaml:///{tmp_path}/store")
    teams = TeamManager(actor_system=system, event_store=store)
    try:
        yield teams
    finally:
        try:
            teams.stop_all()
        finally:
            system.shutdown(timeout=10)
            store.close()
