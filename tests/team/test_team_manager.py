"""TeamManager: the state machine, metadata and the store it keeps in step."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any
from uuid import uuid4

import pytest
from pydantic import ValidationError

from akgentic.core.messages.orchestrator import StartMessage
from akgentic.team import (
    TeamCard,
    TeamClaimLostError,
    TeamManager,
    TeamNotFoundError,
    TeamOwnedError,
    TeamStateError,
    TeamStatus,
)
from akgentic.team.models import Process

CardFactory = Callable[..., TeamCard]
META = "team_test_agents.CaseMetadata"


def meta(**fields: Any) -> Any:
    return importlib.import_module("team_test_agents").CaseMetadata(**fields)


def test_create_records_a_running_team_with_a_pre_generated_id(
    manager: TeamManager, team_card: CardFactory
) -> None:
    team_id = uuid4()
    runtime = manager.create_team(team_card(), user_id="alice", team_id=team_id)
    assert runtime.id == team_id
    process = manager.get_team(team_id)
    assert process is not None
    assert (process.status, process.user_id) == (TeamStatus.RUNNING, "alice")


def test_metadata_is_validated_before_anything_is_built(
    manager: TeamManager, team_card: CardFactory
) -> None:
    with pytest.raises(ValidationError):
        manager.create_team(team_card(metadata_type=META), metadata={"priority": "high"})
    with pytest.raises(ValueError, match="declares no metadata_type"):
        manager.create_team(team_card(), metadata={"tenant": "acme"})
    assert manager.list_teams() == []


def test_update_team_metadata_replaces_the_value_and_its_index_entries(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(
        team_card(metadata_type=META), metadata=meta(tenant="acme", priority=3)
    )
    process = manager.update_team_metadata(runtime.id, {"tenant": "globex"})
    assert process.metadata_indexes == ["tenant|globex", "priority|1"]
    assert manager.list_teams(metadata={"priority": "3"}) == []
    assert runtime.orchestrator_proxy.get_metadata() == meta(tenant="globex")
    with pytest.raises(ValidationError):
        manager.update_team_metadata(runtime.id, {"tenant": ["not", "a", "string"]})
    stored = manager.get_team(runtime.id)
    assert stored is not None and stored.metadata == meta(tenant="globex")
    cleared = manager.update_team_metadata(runtime.id, None)
    assert (cleared.metadata, cleared.metadata_indexes) == (None, [])


def test_list_filters_narrow_and_never_reach_another_users_teams(
    manager: TeamManager, team_card: CardFactory
) -> None:
    card = team_card(metadata_type=META)
    mine = manager.create_team(card, user_id="alice", metadata=meta(tenant="acme"))
    manager.create_team(card, user_id="bob", metadata=meta(tenant="acme"))
    other = manager.create_team(card, user_id="alice", metadata=meta(tenant="globex"))
    manager.stop_team(other.id)
    found = manager.list_teams(user_id="alice", metadata={"tenant": "acme"})
    assert [p.team_id for p in found] == [mine.id]
    assert manager.list_teams(user_id="alice", status=TeamStatus.STOPPED) == [
        manager.get_team(other.id)
    ]
    assert len(manager.list_teams(metadata={"tenant": "acme"})) == 2


def test_stop_is_idempotent_and_resume_and_delete_follow_the_state_machine(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card())
    with pytest.raises(TeamStateError, match="only a stopped team can be resumed"):
        manager.resume_team(runtime.id)
    with pytest.raises(TeamStateError, match="only a stopped team can be deleted"):
        manager.delete_team(runtime.id)
    manager.stop_team(runtime.id)
    first = manager.get_team(runtime.id)
    manager.stop_team(runtime.id)
    assert manager.get_team(runtime.id) == first
    assert first is not None and first.status == TeamStatus.STOPPED
    assert not runtime.orchestrator_addr.is_alive()
    with pytest.raises(TeamNotFoundError):
        manager.resume_team(uuid4())


def test_stop_from_another_manager_is_refused_while_the_owner_lives(
    manager: TeamManager, team_card: CardFactory, actor_system: Any
) -> None:
    runtime = manager.create_team(team_card())
    stranger = TeamManager(actor_system, manager.event_store)  # another process, in effect
    with pytest.raises(TeamOwnedError, match="cannot be asked to stop"):
        stranger.stop_team(runtime.id)
    process = manager.get_team(runtime.id)
    assert process is not None and process.status == TeamStatus.RUNNING
    assert runtime.orchestrator_addr.is_alive()
    manager.stop_team(str(runtime.id))
    assert not runtime.orchestrator_addr.is_alive()


def test_resume_from_another_manager_is_refused_as_owned_before_the_first_event_is_stored(
    manager: TeamManager, team_card: CardFactory, actor_system: Any
) -> None:
    # The state of a team just created: claimed by a live owner, its log still
    # empty because the writer thread has not committed the first batch yet.
    team_id = uuid4()
    record = Process(team_id=team_id, team_card=team_card(), status=TeamStatus.RUNNING)
    store = manager.event_store
    store.claim_team(team_id, manager.owner, create=record)
    try:
        assert store.get_max_sequence(team_id) == 0
        stranger = TeamManager(actor_system, store)  # another process, in effect
        with pytest.raises(TeamOwnedError, match="is running in process"):
            stranger.resume_team(team_id)
        process = manager.get_team(team_id)
        assert process is not None and process.epoch == 1
    finally:
        store.release_team(team_id)


def test_an_owner_whose_claim_was_taken_over_stops_without_writing(
    manager: TeamManager, team_card: CardFactory, actor_system: Any, wait_for: Any
) -> None:
    runtime = manager.create_team(team_card())
    runtime.send("before")
    assert runtime.wait_idle(10)
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None
    persistence.flush(10)
    # The owner's hold vanishes as when its process dies; the owner itself lives on.
    manager.event_store.release_team(runtime.id)
    stranger = TeamManager(actor_system, manager.event_store)
    stranger.stop_team(runtime.id)  # the dead-looking owner is fenced out
    fenced = manager.get_team(runtime.id)
    assert fenced is not None and fenced.status == TeamStatus.STOPPED
    log = manager.event_store.load_events(runtime.id)
    runtime.send("after the takeover")
    wait_for(lambda: manager.claim_lost(runtime.id) is not None)
    wait_for(lambda: not runtime.orchestrator_addr.is_alive())
    with pytest.raises(TeamClaimLostError, match="claimed by another process"):
        manager.stop_team(runtime.id)
    assert manager.event_store.load_events(runtime.id) == log
    assert manager.get_team(runtime.id) == fenced
    assert manager.get_runtime(runtime.id) is None


def test_team_ids_are_accepted_as_strings_everywhere(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card(), team_id=str(uuid4()))
    text = str(runtime.id)
    runtime.send("one")
    assert runtime.wait_idle(10)
    assert manager.get_runtime(text) is runtime
    assert manager.get_team(text) == manager.get_team(runtime.id)
    manager.stop_team(text)
    assert not runtime.orchestrator_addr.is_alive()
    stopped = manager.get_team(text)
    assert stopped is not None and stopped.status == TeamStatus.STOPPED
    texts = [
        getattr(getattr(e.event, "message", None), "content", None)
        for e in manager.event_store.load_events(runtime.id)
    ]
    assert "one" in texts
    assert manager.resume_team(text).id == runtime.id
    manager.stop_team(text)
    manager.delete_team(text)
    assert manager.get_team(runtime.id) is None


def test_resume_continues_the_sequence_without_writing_the_replay_again(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card())
    runtime.send("one")
    assert runtime.wait_idle(10)
    manager.stop_team(runtime.id)
    before = manager.event_store.load_events(runtime.id)
    resumed = manager.resume_team(runtime.id)
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None
    persistence.flush(10)
    assert manager.event_store.load_events(runtime.id) == before
    resumed.send("two")
    assert resumed.wait_idle(10)
    manager.stop_team(runtime.id)
    after = manager.event_store.load_events(runtime.id)
    assert after[: len(before)] == before
    assert [e.sequence for e in after] == list(range(1, len(after) + 1))
    starts = [e.event for e in after if isinstance(e.event, StartMessage)]
    assert sorted(s.config.name for s in starts) == ["@Echo", "@Entry", "@Orchestrator"]


def test_delete_purges_the_record_events_and_states(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card())
    runtime.send("x")
    assert runtime.wait_idle(10)
    manager.stop_team(runtime.id)
    assert manager.event_store.load_agent_states(runtime.id) != []
    manager.delete_team(runtime.id)
    assert manager.get_team(runtime.id) is None
    assert manager.event_store.load_events(runtime.id) == []
    assert manager.event_store.load_agent_states(runtime.id) == []
    with pytest.raises(TeamNotFoundError):
        manager.delete_team(runtime.id)


def test_stop_here_only_leaves_a_copy_another_manager_runs_alone(
    manager: TeamManager, team_card: CardFactory, actor_system: Any
) -> None:
    runtime = manager.create_team(team_card())
    runtime.send("one")
    assert runtime.wait_idle(10)
    manager.stop_team(runtime.id)
    other = TeamManager(actor_system, manager.event_store)  # resumed it since
    resumed = other.resume_team(runtime.id)
    manager.stop_team(runtime.id, here_only=True)  # e.g. a session ending late
    assert resumed.orchestrator_addr.is_alive()
    process = manager.get_team(runtime.id)
    assert process is not None and process.status == TeamStatus.RUNNING
    other.stop_team(runtime.id)
