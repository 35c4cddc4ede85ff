"""Plugins attach event subscribers to every team a manager runs (``akgentic_team_subscribers``).

Real teams (the lifecycle tests' ``Echo`` agents) on a real SQLite store, with inline
plugins registered into an isolated plugin host that the manager reads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import ActorSystem
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.plugins import PluginHost, PluginInfo, hookimpl
from akgentic.team import SqliteEventStore, TeamCard, TeamCardError, TeamManager


class Recorder:
    """A subscriber that keeps what it is told, for one team."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.messages: list[Message] = []
        self.restoring: list[bool] = []
        self.stopped: list[UUID] = []

    def on_message(self, msg: Message) -> None:
        with self.lock:
            self.messages.append(msg)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        self.restoring.append(restoring)

    def on_stop(self, team_id: UUID) -> None:
        self.stopped.append(team_id)

    def noted(self) -> list[str]:
        """The texts the team's Echo agents published (their ``Noted`` events)."""
        with self.lock:
            return [
                str(getattr(m.event, "text", ""))
                for m in self.messages
                if isinstance(m, EventMessage) and hasattr(m.event, "text")
            ]


class Attaching:
    """A plugin whose hook gives every team a fresh :class:`Recorder`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str | None, UUID]] = []
        self.recorders: list[Recorder] = []

    @hookimpl
    def akgentic_team_subscribers(self, team_card: TeamCard, team_id: UUID) -> Iterable[Recorder]:
        self.calls.append((team_card.name, team_id))
        self.recorders.append(Recorder())
        return [self.recorders[-1]]


class Raising:
    """A plugin whose hook fails (a bug), or returns something that is no subscriber."""

    def __init__(self, result: Callable[[], Any]) -> None:
        self.result = result

    @hookimpl
    def akgentic_team_subscribers(self, team_card: TeamCard, team_id: UUID) -> Any:
        return self.result()


class Refusing:
    """A plugin that refuses cards (its block is malformed, say) while ``refuse`` is set."""

    def __init__(self) -> None:
        self.refuse = True

    @hookimpl
    def akgentic_team_subscribers(self, team_card: TeamCard, team_id: UUID) -> list[Recorder]:
        if self.refuse:
            raise TeamCardError("telemetry.endpoint: not a URL")
        return []


@pytest.fixture
def hooked_manager(
    plugin_host: PluginHost, actor_system: ActorSystem, tmp_path: Path
) -> Iterator[TeamManager]:
    """A manager reading the test's isolated plugin host; its teams stop afterwards."""
    store = SqliteEventStore(tmp_path / "hooked.db")
    manager = TeamManager(actor_system, store, registry=plugin_host.registry)
    try:
        yield manager
    finally:
        manager.stop_all()
        store.close()


def _boom() -> Any:
    raise RuntimeError("boom")


def test_a_plugin_subscriber_sees_a_created_team_and_again_the_resumed_team(
    register_plugin: Callable[..., PluginInfo],
    hooked_manager: TeamManager,
    team_card: Callable[..., TeamCard],
    wait_for: Callable[..., None],
) -> None:
    plugin = Attaching()
    register_plugin(plugin, "attaching")
    runtime = hooked_manager.create_team(team_card())
    assert plugin.calls == [("test-team", runtime.id)]
    runtime.send("one")
    first = plugin.recorders[0]
    wait_for(lambda: "one" in first.noted())

    hooked_manager.stop_team(runtime.id)
    assert first.stopped == [runtime.id]  # released when the team stopped

    resumed = hooked_manager.resume_team(runtime.id)
    assert plugin.calls == [("test-team", runtime.id)] * 2
    second = plugin.recorders[1]
    assert second.restoring == [True, False]  # told the history it saw was a replay
    assert "one" in second.noted()
    resumed.send("two")
    wait_for(lambda: "two" in second.noted())
    assert "two" not in first.noted()


@pytest.mark.parametrize(
    ("result", "error"),
    [
        pytest.param(_boom, "akgentic_team_subscribers failed: RuntimeError: boom", id="raises"),
        pytest.param(lambda: [42], "42 is not an event subscriber", id="not-a-subscriber"),
    ],
)
def test_a_plugin_whose_hook_fails_is_reported_and_the_team_works_without_it(
    register_plugin: Callable[..., PluginInfo],
    hooked_manager: TeamManager,
    team_card: Callable[..., TeamCard],
    wait_for: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
    result: Callable[[], Any],
    error: str,
) -> None:
    broken = register_plugin(Raising(result), "broken")
    working = Attaching()
    register_plugin(working, "working")
    with caplog.at_level(logging.WARNING):
        runtime = hooked_manager.create_team(team_card())
    runtime.send("one")
    wait_for(lambda: "one" in working.recorders[0].noted())
    assert broken.status == "failed"
    assert error in (broken.error or "")
    reports = [r.getMessage() for r in caplog.records if "'broken'" in r.getMessage()]
    assert len(reports) == 1 and error in reports[0] and "\n" not in reports[0]


def test_a_plugin_refusing_the_card_fails_creation_and_only_warns_on_resume(
    register_plugin: Callable[..., PluginInfo],
    hooked_manager: TeamManager,
    team_card: Callable[..., TeamCard],
    caplog: pytest.LogCaptureFixture,
) -> None:
    refusing = Refusing()
    info = register_plugin(refusing, "refusing")
    with pytest.raises(TeamCardError, match=r"telemetry\.endpoint: not a URL"):
        hooked_manager.create_team(team_card())
    assert hooked_manager.list_teams() == []  # nothing of the refused team is stored
    assert info.status == "loaded"  # a refusal is not a broken plugin

    refusing.refuse = False
    runtime = hooked_manager.create_team(team_card())
    hooked_manager.stop_team(runtime.id)
    refusing.refuse = True  # the plugin now refuses the stored card: the team still resumes
    with caplog.at_level(logging.WARNING):
        resumed = hooked_manager.resume_team(runtime.id)
    assert resumed.id == runtime.id
    assert any("refused team" in r.getMessage() for r in caplog.records)
    assert info.status == "loaded"
