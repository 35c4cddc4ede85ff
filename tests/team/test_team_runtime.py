"""TeamFactory.build and the TeamRuntime verbs, on real actors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pykka
import pytest

from akgentic.core import ActorSystem, Orchestrator
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import EventMessage, SentMessage, StartMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.team import (
    ActivityMonitor,
    TeamCard,
    TeamFactory,
    TeamManager,
    TeamRuntime,
    WelcomeMessage,
)

CardFactory = Callable[..., TeamCard]
Member = Callable[..., dict[str, Any]]


def events_of(manager: TeamManager, runtime: TeamRuntime) -> list[Message]:
    persistence = manager.get_persistence(runtime.id)
    assert persistence is not None
    persistence.flush(10)
    return [e.event for e in manager.event_store.load_events(runtime.id)]


def seen(runtime: TeamRuntime, name: str) -> list[str]:
    result: list[str] = ProxyWrapper(runtime.resolve(name), timeout=10).seen()
    return result


def test_build_spawns_the_tree_with_headcount_names_and_children_under_the_last_instance(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(
        members=[
            member("Echo", "@Lead", members=[member("Echo", "@Researcher", headcount=3)]),
        ]
    )
    runtime = sqlite_manager.create_team(card)
    assert sorted(runtime.addrs) == [
        "@Entry",
        "@Lead",
        "@Researcher_0",
        "@Researcher_1",
        "@Researcher_2",
    ]
    assert list(runtime.supervisor_addrs) == ["@Lead"]
    starts = {
        m.config.name: m for m in events_of(sqlite_manager, runtime) if isinstance(m, StartMessage)
    }
    assert starts["@Researcher_0"].parent is not None
    assert starts["@Researcher_0"].parent.name == "@Lead"
    assert starts["@Lead"].parent is not None
    assert starts["@Lead"].parent.name == "@Orchestrator"
    assert "@Researcher" not in starts


def test_the_orchestrator_start_is_event_one_of_a_new_team(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card())
    events = events_of(manager, runtime)
    first = events[0]
    assert isinstance(first, StartMessage)
    assert first.config.name == "@Orchestrator"
    assert [e.sequence for e in manager.event_store.load_events(runtime.id)] == list(
        range(1, len(events) + 1)
    )


def test_send_reaches_every_supervisor_and_never_the_entry_point(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(
        members=[member("Echo", "@A"), member("Echo", "@B", members=[member("Echo", "@C")])]
    )
    runtime = sqlite_manager.create_team(card)
    runtime.send("hello")
    assert runtime.wait_idle(10)
    assert seen(runtime, "@A") == ["hello"]
    assert seen(runtime, "@B") == ["hello"]
    assert seen(runtime, "@C") == []
    assert seen(runtime, "@Entry") == []
    sent = [m for m in events_of(sqlite_manager, runtime) if isinstance(m, SentMessage)]
    assert {m.sender.name for m in sent if m.sender} == {"@Entry"}
    assert len({m.message.id for m in sent}) == 1  # the same instance to both supervisors


def test_send_to_reaches_one_named_member_and_rejects_unknown_names(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(members=[member("Echo", "@A"), member("Echo", "@B")])
    runtime = sqlite_manager.create_team(card)
    runtime.send_to("@B", "only you")
    assert runtime.wait_idle(10)
    assert seen(runtime, "@A") == []
    assert seen(runtime, "@B") == ["only you"]
    with pytest.raises(ValueError, match="no member named '@Nobody'"):
        runtime.send_to("@Nobody", "hi")


def test_send_from_to_uses_the_named_sender(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(members=[member("Echo", "@A"), member("Echo", "@B")])
    runtime = sqlite_manager.create_team(card)
    runtime.send_from_to("@A", "@B", UserMessage(content="from A"))
    assert runtime.wait_idle(10)
    sent = [m for m in events_of(sqlite_manager, runtime) if isinstance(m, SentMessage)]
    assert [(m.sender.name, m.recipient.name) for m in sent if m.sender] == [("@A", "@B")]
    assert seen(runtime, "@B") == ["from A"]


def test_a_string_needs_a_declared_message_type_but_a_message_passes_through(
    sqlite_manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = sqlite_manager.create_team(team_card(message_types=[]))
    with pytest.raises(RuntimeError, match="No message type declared"):
        runtime.send("plain text")
    message = UserMessage(content="typed")
    runtime.send(message)
    assert runtime.wait_idle(10)
    assert seen(runtime, "@Echo") == ["typed"]


def test_emit_message_is_recorded_without_any_agent_handling_it(
    sqlite_manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = sqlite_manager.create_team(team_card())
    runtime.emitMessage(UserMessage(content="banner"))
    runtime.orchestrator_proxy.get_team()  # the tell went through
    emitted = [m for m in events_of(sqlite_manager, runtime) if isinstance(m, UserMessage)]
    assert [m.content for m in emitted] == ["banner"]
    assert emitted[0].team_id == runtime.id
    assert seen(runtime, "@Echo") == []


def test_the_welcome_message_is_recorded_once_at_creation_and_not_on_resume(
    manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = manager.create_team(team_card(welcome_message="Welcome aboard"))
    runtime.wait_idle(10)

    def welcomes() -> list[SentMessage]:
        return [
            m
            for m in (e.event for e in manager.event_store.load_events(runtime.id))
            if isinstance(m, SentMessage) and isinstance(m.message, WelcomeMessage)
        ]

    manager.stop_team(runtime.id)
    assert [w.message.content for w in welcomes()] == ["Welcome aboard"]  # type: ignore[attr-defined]
    assert welcomes()[0].recipient.name == "@Entry"
    resumed = manager.resume_team(runtime.id)
    resumed.send("hi")
    assert resumed.wait_idle(10)
    manager.stop_team(runtime.id)
    assert len(welcomes()) == 1


def test_agent_profiles_are_the_hireable_catalog_and_members_are_not_in_it(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    profile = member("Echo", "@Translator", "Translator")["card"]
    runtime = sqlite_manager.create_team(team_card(agent_profiles=[profile]))
    catalog = runtime.orchestrator_proxy.get_agent_catalog()
    assert list(catalog) == ["Translator"]
    assert catalog["Translator"].can_be_hired is True
    assert runtime.orchestrator_proxy.get_team_member("@Echo") is not None
    assert runtime.orchestrator_proxy.get_team_member("@Translator") is None


def test_a_failing_build_stops_everything_it_spawned_and_writes_no_record(
    manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(members=[member("Echo", "@A"), member("Broken", "@B")])
    before = {ref.actor_class for ref in pykka.ActorRegistry.get_all()}
    with pytest.raises(RuntimeError, match="cannot start"):
        manager.create_team(card)
    left = [
        ref
        for ref in pykka.ActorRegistry.get_all()
        if issubclass(ref.actor_class, Akgent) and ref.actor_class not in before
    ]
    assert left == []
    assert manager.list_teams() == []


def test_a_failing_build_leaves_no_orphan_events_or_states_behind(
    manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    from uuid import uuid4

    card = team_card(members=[member("Echo", "@A"), member("Broken", "@B")])
    team_id = uuid4()
    with pytest.raises(RuntimeError, match="cannot start"):
        manager.create_team(card, team_id=team_id)
    store = manager.event_store
    assert store.load_team(team_id) is None
    assert store.load_events(team_id) == []
    assert store.load_agent_states(team_id) == []
    assert store.stored_team_ids() == set()
    assert not store.claim_held(team_id)
    retried = manager.create_team(team_card(), team_id=team_id)  # the id is free again
    assert retried.id == team_id


def test_process_human_input_answers_through_the_user_proxy_named_as_recipient(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    card = team_card(members=[member("Echo", "@Echo"), member("Human", "@Human", "Human")])
    runtime = sqlite_manager.create_team(card)
    runtime.send_from_to("@Echo", "@Human", "question?")
    assert runtime.wait_idle(10)
    sent = next(
        m
        for m in events_of(sqlite_manager, runtime)
        if isinstance(m, SentMessage) and m.recipient.name == "@Human"
    )
    # A UI hands back the message it displayed, addressed to the human it was shown to.
    question = sent.message.model_copy(update={"recipient": sent.recipient})
    runtime.process_human_input("answer!", question)
    assert runtime.wait_idle(10)
    answers = [
        m
        for m in events_of(sqlite_manager, runtime)
        if isinstance(m, SentMessage) and m.sender is not None and m.sender.name == "@Human"
    ]
    assert [(a.recipient.name, a.message.content) for a in answers] == [("@Echo", "answer!")]  # type: ignore[attr-defined]
    not_human = question.model_copy(update={"recipient": runtime.resolve("@Echo")})
    with pytest.raises(ValueError, match="not a user proxy"):
        runtime.process_human_input("nope", not_human)


def test_a_runtime_round_trips_through_its_dump_back_to_live_addresses(
    sqlite_manager: TeamManager, team_card: CardFactory, actor_system: ActorSystem
) -> None:
    runtime = sqlite_manager.create_team(team_card())
    data = runtime.model_dump()
    assert "actor_system" not in data
    rebuilt = TeamRuntime.model_validate(data, context={"actor_system": actor_system})
    assert rebuilt.entry_addr == runtime.entry_addr  # live again: equal to the live address
    rebuilt.send("via the copy")
    assert runtime.wait_idle(10)  # the original waits for what its copy sent too
    assert seen(runtime, "@Echo") == ["via the copy"]
    unbound = TeamRuntime.model_validate(data)
    with pytest.raises(RuntimeError, match="not bound"):
        unbound.send("x")
    assert unbound.bind(actor_system).entry_addr == runtime.entry_addr


def test_factory_build_works_without_a_manager_and_attaches_subscribers(
    actor_system: ActorSystem, team_card: CardFactory
) -> None:
    monitor = ActivityMonitor()
    runtime = TeamFactory.build(team_card(), actor_system, [monitor])
    runtime.send("x")
    assert runtime.wait_idle(10)
    assert monitor.changes >= 2  # one entry opened and closed
    assert monitor.in_flight == 0
    orchestrator: Orchestrator = actor_system.proxy_ask(runtime.orchestrator_addr, Orchestrator)
    assert any(isinstance(m, EventMessage) for m in orchestrator.get_messages())


def _shape(events: list[Message]) -> list[tuple[Any, ...]]:
    """The record of a team with what differs between two runs (ids, times) left out."""
    shape: list[tuple[Any, ...]] = []
    for event in events:
        row: tuple[Any, ...] = (
            type(event).__name__,
            event.sender.name if event.sender else None,
            sorted(event.model_fields_set),
            event.parent_id is None,
        )
        if isinstance(event, SentMessage):
            inner = event.message
            row += (
                event.recipient.name,
                type(inner).__name__,
                getattr(inner, "content", None),
                sorted(inner.model_fields_set),
                inner.sender.name if inner.sender else None,
                inner.team_id == event.team_id,
                inner.parent_id,
                inner.display_type,
                inner.timestamp is not None and inner.timestamp.tzinfo is not None,
            )
        shape.append(row)
    return shape


def test_send_records_the_same_events_on_its_fast_path_and_on_the_generic_one(
    sqlite_manager: TeamManager, team_card: CardFactory, member: Member
) -> None:
    # The default team takes every fast path (text built without validation, the
    # entry's SentMessage built in place); the other takes none of them: a message
    # type with a validator and an entry point with its own _emit.
    fast = sqlite_manager.create_team(team_card())
    generic = sqlite_manager.create_team(
        team_card(
            entry_point=member("EmitThrough", "@Entry", "Entry"),
            message_types=["team_test_agents.TrimmedMessage"],
        )
    )
    for runtime in (fast, generic):
        for text in ("one", "two", "three"):
            runtime.send(text)
        assert runtime.wait_idle(10)
    assert seen(fast, "@Echo") == seen(generic, "@Echo") == ["one", "two", "three"]
    fast_shape = _shape(events_of(sqlite_manager, fast))
    generic_shape = [
        tuple("UserMessage" if v == "TrimmedMessage" else v for v in row)
        for row in _shape(events_of(sqlite_manager, generic))
    ]
    # How one member's records interleave with another's depends on the threads'
    # timing; each member's own records come from its one thread, in its order.
    assert _by_sender(fast_shape) == _by_sender(generic_shape)
    assert sorted(fast_shape, key=repr) == sorted(generic_shape, key=repr)
    assert sum(row[0] == "SentMessage" for row in fast_shape) == 3


def _by_sender(shape: list[tuple[Any, ...]]) -> dict[Any, list[tuple[Any, ...]]]:
    rows: dict[Any, list[tuple[Any, ...]]] = {}
    for row in shape:
        rows.setdefault(row[1], []).append(row)
    return rows


def test_a_message_type_whose_validation_changes_the_text_is_still_validated(
    sqlite_manager: TeamManager, team_card: CardFactory
) -> None:
    runtime = sqlite_manager.create_team(
        team_card(message_types=["team_test_agents.TrimmedMessage"])
    )
    runtime.send("  padded  ")
    assert runtime.wait_idle(10)
    assert seen(runtime, "@Echo") == ["padded"]
