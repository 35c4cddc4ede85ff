"""Plugins carry their state into a fork, or refuse it (``akgentic_team_fork``).

Real teams (the lifecycle tests' ``Echo`` agents) on SQLite, with inline plugins in an
isolated plugin host: a step is staged, published before the record and discarded on
failure; a refusal, or a hook that fails, creates nothing; a fork of a fork is told its
own parent; the forked team resumes and runs next to its parent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import ActorSystem
from akgentic.plugins import PluginHost, PluginInfo, hookimpl
from akgentic.team import (
    ForkRefusedError,
    ForkRequest,
    SqliteEventStore,
    TeamCard,
    TeamManager,
)
from akgentic.team.stores.codec import encode_event


class Step:
    """A step that records what the fork made it do, in order."""

    card = "recording"

    def __init__(self, journal: list[str], fail_on: str = "") -> None:
        self.journal = journal
        self.fail_on = fail_on
        self.rewrites: dict[str, str] = {}

    def _do(self, what: str) -> None:
        self.journal.append(what)
        if what == self.fail_on:
            raise OSError(f"{what} failed")

    def prepare(self) -> None:
        self._do("prepare")

    def publish(self) -> None:
        self._do("publish")

    def discard(self) -> None:
        self._do("discard")


class Carrying:
    """A plugin whose hook returns one :class:`Step` per fork and keeps the requests."""

    def __init__(self, fail_on: str = "") -> None:
        self.journal: list[str] = []
        self.requests: list[ForkRequest] = []
        self.fail_on = fail_on

    @hookimpl
    def akgentic_team_fork(self, fork: ForkRequest) -> Step:
        self.requests.append(fork)
        return Step(self.journal, self.fail_on)


class Refusing:
    @hookimpl
    def akgentic_team_fork(self, fork: ForkRequest) -> None:
        if fork.mentions("Echo"):
            raise ForkRefusedError("echo-board", "keeps its board outside the log")


class Broken:
    @hookimpl
    def akgentic_team_fork(self, fork: ForkRequest) -> None:
        raise RuntimeError("boom")


@pytest.fixture
def hooked(plugin_host: PluginHost, actor_system: ActorSystem, tmp_path: Path) -> Iterator[Any]:
    store = SqliteEventStore(tmp_path / "hooked.db")
    manager = TeamManager(actor_system, store, registry=plugin_host.registry)
    try:
        yield manager
    finally:
        manager.stop_all()
        store.close()


def _stopped_team(manager: TeamManager, card: TeamCard, wait_for: Any) -> UUID:
    runtime = manager.create_team(card)
    runtime.send("one")
    assert runtime.wait_idle(30)
    manager.stop_team(runtime.id)
    return runtime.id


def test_a_step_is_prepared_then_published_and_the_fork_of_a_fork_knows_its_parent(
    register_plugin: Callable[..., PluginInfo],
    hooked: TeamManager,
    team_card: Callable[..., TeamCard],
    wait_for: Callable[..., None],
) -> None:
    plugin = Carrying()
    register_plugin(plugin, "carrying")
    parent = _stopped_team(hooked, team_card(), wait_for)
    first = hooked.fork_team(parent, 4)
    assert plugin.journal == ["prepare", "publish"]
    request = plugin.requests[0]
    assert (request.parent_id, request.child_id, request.at_sequence) == (parent, first.team_id, 4)
    assert request.new_id(parent) == str(first.team_id)
    second = hooked.fork_team(first.team_id, 3)
    assert plugin.requests[1].parent_id == first.team_id
    record = hooked.get_team(second.team_id)
    assert record is not None and record.lineage.parent_id == first.team_id

    # The forks run, each on its own actors, next to a running parent.
    runtime = hooked.resume_team(parent)
    fork = hooked.resume_team(first.team_id)
    assert set(fork.addrs.values()).isdisjoint(runtime.addrs.values())
    assert {a.agent_id for a in fork.addrs.values()}.isdisjoint(
        a.agent_id for a in runtime.addrs.values()
    )
    fork.send("two")
    runtime.send("three")
    assert fork.wait_idle(30) and runtime.wait_idle(30)
    for team in (fork, runtime):
        persistence = hooked.get_persistence(team.id)
        assert persistence is not None
        persistence.flush(30)
    forked = " ".join(encode_event(e) for e in hooked.event_store.load_events(fork.id))
    assert '"content":"two"' in forked and '"content":"three"' not in forked


@pytest.mark.parametrize("fail_on", ["prepare", "publish"])
def test_a_step_that_fails_is_discarded_and_nothing_is_made(
    register_plugin: Callable[..., PluginInfo],
    hooked: TeamManager,
    team_card: Callable[..., TeamCard],
    wait_for: Callable[..., None],
    fail_on: str,
) -> None:
    plugin = Carrying(fail_on)
    register_plugin(plugin, "carrying")
    parent = _stopped_team(hooked, team_card(), wait_for)
    before = hooked.event_store.stored_team_ids()
    with pytest.raises(OSError, match=f"{fail_on} failed"):
        hooked.fork_team(parent, 4)
    assert plugin.journal[-1] == "discard"
    assert hooked.event_store.stored_team_ids() == before


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (Refusing(), "cannot fork: card 'echo-board' keeps its board outside the log"),
        (Broken(), "cannot fork: card 'broken' failed to prepare its state: RuntimeError: boom"),
    ],
)
def test_a_refusal_or_a_failing_hook_creates_nothing(
    register_plugin: Callable[..., PluginInfo],
    hooked: TeamManager,
    team_card: Callable[..., TeamCard],
    wait_for: Callable[..., None],
    plugin: object,
    message: str,
) -> None:
    register_plugin(plugin, type(plugin).__name__.lower())
    parent = _stopped_team(hooked, team_card(), wait_for)
    before = hooked.event_store.stored_team_ids()
    with pytest.raises(ForkRefusedError) as refused:
        hooked.fork_team(parent, 4)
    assert str(refused.value) == message
    assert hooked.event_store.stored_team_ids() == before
