"""TeamRestorer: what comes back after a stop, and in which order."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import ActorAddressImpl, ActorSystem, BaseConfig
from akgentic.core.agent import Akgent
from akgentic.core.messages.orchestrator import StartMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.team import Process, TeamCard, TeamManager, TeamRestorer, TeamRuntime, TeamStatus

CardFactory = Callable[..., TeamCard]
Member = Callable[..., dict[str, Any]]


def call(runtime: TeamRuntime, name: str, method: str) -> Any:
    return getattr(ProxyWrapper(runtime.resolve(name), timeout=10), method)()


def restart(manager: TeamManager, runtime: TeamRuntime) -> TeamRuntime:
    manager.stop_team(runtime.id)
    return manager.resume_team(runtime.id)


def test_agents_come_back_with_their_ids_parents_states_and_event_history(
    manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(members=[member("Echo", "@Lead", members=[member("Echo", "@Worker")])])
    runtime = manager.create_team(card)
    runtime.send("first")
    runtime.send_to("@Worker", "second")
    assert runtime.wait_idle(10)
    ids = {name: address.agent_id for name, address in runtime.addrs.items()}
    resumed = restart(manager, runtime)
    assert {name: a.agent_id for name, a in resumed.addrs.items()} == ids
    assert call(resumed, "@Lead", "seen") == ["first"]
    assert call(resumed, "@Worker", "seen") == ["second"]
    assert call(resumed, "@Lead", "restored_texts") == ["first"]
    assert call(resumed, "@Entry", "restored_texts") == []  # no events: context untouched
    team = {m.name: m for m in resumed.members}
    assert all(isinstance(m, ActorAddressImpl) for m in team.values())
    worker = ProxyWrapper(team["@Worker"], timeout=10)
    assert worker.parent.agent_id == team["@Lead"].agent_id


def test_an_agent_hired_at_run_time_comes_back_and_a_fired_member_does_not(
    manager: TeamManager,
    team_card: CardFactory,
    member: Member,
    actor_system: ActorSystem,
    wait_for: Callable[..., None],
) -> None:
    echo_class = importlib.import_module("team_test_agents").Echo

    runtime = manager.create_team(
        team_card(members=[member("Echo", "@Echo"), member("Echo", "@Old")])
    )
    lead: Akgent[Any, Any] = actor_system.proxy_ask(runtime.resolve("@Echo"), Akgent, 10)
    lead.createActor(echo_class, config=BaseConfig(name="@Hired", role="Helper"))
    ProxyWrapper(runtime.resolve("@Old"), timeout=10).stop()
    wait_for(lambda: {m.name for m in runtime.members} == {"@Entry", "@Echo", "@Hired"})
    runtime.send_to("@Hired", "welcome")
    assert runtime.wait_idle(10)
    resumed = restart(manager, runtime)
    assert sorted(m.name for m in resumed.members) == ["@Echo", "@Entry", "@Hired"]
    assert call(resumed, "@Hired", "seen") == ["welcome"]
    hired = next(m for m in resumed.members if m.name == "@Hired")
    assert ProxyWrapper(hired, timeout=10).parent.name == "@Echo"


def test_tool_actors_are_restored_before_the_agents_that_look_them_up(
    manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    runtime = manager.create_team(team_card(members=[member("ToolUser", "@User")]))
    tool_id = call(runtime, "@User", "tool_id")
    resumed = restart(manager, runtime)
    assert call(resumed, "@User", "tool_id") == tool_id
    assert [m.name for m in resumed.members].count("#Counter") == 1


def test_the_orchestrator_history_holds_each_start_once_after_a_restore(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card())
    resumed = restart(manager, runtime)
    history = resumed.orchestrator_proxy.get_messages()
    starts = [m.config.name for m in history if isinstance(m, StartMessage)]
    assert sorted(starts) == ["@Echo", "@Entry", "@Orchestrator"]
    stored = [e.event.id for e in manager.event_store.load_events(runtime.id)]
    assert [m.id for m in history] == stored[: len(history)]


def test_restoring_an_empty_log_fails_and_leaves_no_actor(
    actor_system: ActorSystem, any_store: Any, team_card: CardFactory
) -> None:
    process = Process(team_id=uuid4(), team_card=team_card(), status=TeamStatus.STOPPED)
    before = set(actor_system.orchestrators)
    with pytest.raises(ValueError, match="event log is empty"):
        TeamRestorer(actor_system, any_store).restore(process)
    assert set(actor_system.orchestrators) == before


def test_a_restore_that_fails_stops_what_it_spawned_and_leaves_the_team_stopped(
    manager: TeamManager, team_card: CardFactory, actor_system: ActorSystem
) -> None:
    runtime = manager.create_team(team_card(members=[]))
    manager.stop_team(runtime.id)
    process = manager.get_team(runtime.id)
    assert process is not None
    # A card whose entry point is not in the log cannot be restored.
    broken = process.team_card.model_copy(
        update={
            "entry_point": process.team_card.entry_point.model_copy(
                update={
                    "card": process.team_card.entry_point.card.model_copy(
                        update={"config": BaseConfig(name="@Elsewhere", role="Entry")}
                    )
                }
            )
        }
    )
    manager.event_store.save_team(process.model_copy(update={"team_card": broken}))
    with pytest.raises(ValueError, match="entry point '@Elsewhere'"):
        manager.resume_team(runtime.id)
    assert actor_system.orchestrators == []
    stored = manager.get_team(runtime.id)
    assert stored is not None and stored.status == TeamStatus.STOPPED


def test_a_team_with_a_quarantined_event_goes_on_and_resumes(
    actor_system: ActorSystem, any_store: Any, team_card: CardFactory, member: Member
) -> None:
    from akgentic.team import EventQuarantined
    from akgentic.testing.event_store_poison import POISON_MARK, RefusingStore

    refusing: Any = RefusingStore(any_store)
    manager = TeamManager(actor_system, refusing)
    try:
        runtime = manager.create_team(team_card(members=[member("Echo", "@Echo")]))
        runtime.send(f"{POISON_MARK} first")
        runtime.send("second")
        assert runtime.wait_idle(10)
        manager.stop_team(runtime.id)
        events = any_store.load_events(runtime.id)
        quarantined = [e for e in events if isinstance(e.event, EventQuarantined)]
        assert quarantined, "the refused event has no stand-in"
        assert [e.sequence for e in events] == list(range(1, len(events) + 1))
        resumed = manager.resume_team(runtime.id)
        assert call(resumed, "@Echo", "seen")[-1] == "second"
        resumed.send("third")
        assert resumed.wait_idle(10)
        assert call(resumed, "@Echo", "seen")[-1] == "third"
    finally:
        manager.stop_all()


def test_configure_rewrites_each_restored_config_and_profile_for_that_run_only(
    manager: TeamManager, team_card: CardFactory
) -> None:
    helper = {
        "agent_class": "team_test_agents.Echo",
        "description": "hireable",
        "config": {"name": "@Helper", "role": "Helper"},
    }
    runtime = manager.create_team(team_card(agent_profiles=[helper]))
    runtime.send("hi")
    assert runtime.wait_idle(10)
    manager.stop_team(runtime.id)
    seen: list[str] = []

    def configure(config: BaseConfig) -> BaseConfig:
        seen.append(config.name)
        config.role += "-local"
        return config

    resumed = manager.resume_team(runtime.id, configure=configure)
    assert sorted(seen) == ["@Echo", "@Entry", "@Helper"]
    assert ProxyWrapper(resumed.resolve("@Echo"), timeout=10).config.role == "Echo-local"
    assert call(resumed, "@Echo", "seen") == ["hi"]
    catalog = ProxyWrapper(resumed.orchestrator_addr, timeout=10).get_agent_catalog()
    assert catalog["Helper-local"].config.name == "@Helper"
    again = restart(manager, resumed)  # not recorded: the next resume runs on the log's configs
    assert ProxyWrapper(again.resolve("@Echo"), timeout=10).config.role == "Echo"
