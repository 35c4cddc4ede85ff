"""Orchestrator: roster, history, subscribers, catalog, metadata, singletons."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest

from akgentic.core import ActorSystem, AgentCard, BaseConfig, BaseState, Orchestrator
from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.actor_address_impl import ActorAddressImpl
from akgentic.core.agent import Akgent
from akgentic.core.messages import (
    EventMessage,
    Message,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StopMessage,
    TeamStoppingEvent,
    UserMessage,
)
from akgentic.core.messages.types import ClosedNotification


class Worker(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, message: UserMessage) -> str:
        return message.content

    def announce(self, event: object) -> None:
        self.notify_event(event)

    def report(self, message: Message) -> None:
        self._notify_orchestrator(message)


class Custom(NotificationMessage):
    pass


class Exploding:
    def __init__(self) -> None:
        self.calls = 0

    def on_message(self, msg: Message) -> None:
        self.calls += 1
        raise RuntimeError("subscriber bug")

    def on_stop(self, team_id: Any) -> None:
        raise RuntimeError("hook bug")


def test_a_fresh_orchestrator_has_an_empty_team_and_only_its_own_start(team: Any) -> None:
    assert team.orchestrator.get_team() == []
    history = team.orchestrator.get_messages()
    assert [type(m) for m in history] == [StartMessage]
    assert history[0].sender == team.address
    assert history[0].team_id == team.address.team_id


def test_roster_follows_start_and_stop(team: Any, wait_until: Any) -> None:
    a = team.spawn(Worker, "@A")
    b = team.spawn(Worker, "@B")
    wait_until(lambda: len(team.orchestrator.get_team()) == 2)
    assert team.orchestrator.get_team_member("@B") == b
    team.system.proxy_ask(a, Worker).stop()
    wait_until(lambda: [m.name for m in team.orchestrator.get_team()] == ["@B"])
    assert team.orchestrator.get_team_member("@A") is None


def test_subscribers_get_snapshots_while_history_keeps_live_addresses(
    team: Any, wait_until: Any
) -> None:
    worker = team.spawn(Worker, "@W")
    team.system.ask(worker, UserMessage(content="x"))
    wait_until(lambda: team.recorder.of_type(ProcessedMessage))
    for msg in team.recorder.messages:
        assert not isinstance(msg.sender, ActorAddressImpl)
    received = team.recorder.of_type(ReceivedMessage)[0]
    assert isinstance(received.sender, ActorAddressProxy)
    live = [m for m in team.orchestrator.get_messages() if isinstance(m, ReceivedMessage)]
    assert isinstance(live[0].sender, ActorAddressImpl)


def test_sent_messages_are_snapshotted_down_to_the_inner_message(
    team: Any, wait_until: Any
) -> None:
    class Forwarder(Akgent[BaseConfig, BaseState]):
        def receiveMsg_UserMessage(self, message: UserMessage, sender: Any) -> None:
            self.send(sender, UserMessage(content="back"))

    fwd = team.spawn(Forwarder, "@F")
    team.system.tell(fwd, UserMessage(content="go"))
    wait_until(lambda: team.recorder.of_type(SentMessage))
    sent = team.recorder.of_type(SentMessage)[0]
    assert isinstance(sent.recipient, ActorAddressProxy)
    assert isinstance(sent.message.sender, ActorAddressProxy)
    assert team.system.listen(timeout=5).content == "back"


def test_a_subscriber_that_raises_does_not_stop_the_others(
    team: Any, recorder_cls: Any, wait_until: Any
) -> None:
    exploding = Exploding()
    second = recorder_cls()
    team.orchestrator.unsubscribe(team.recorder)
    team.orchestrator.subscribe(exploding)
    team.orchestrator.subscribe(second)
    worker = team.spawn(Worker, "@W")
    team.system.ask(worker, UserMessage(content="x"))
    wait_until(lambda: second.of_type(ProcessedMessage))
    assert exploding.calls >= 3
    team.orchestrator.stop().wait(5)
    assert second.stopped.is_set()


def test_a_stopped_orchestrator_lets_go_of_its_history_without_a_full_collection(
    team: Any, wait_until: Any
) -> None:
    # A stopped actor stays referenced (its ref, its address cycles): were its history
    # kept with it, only a full collection, which holds every thread, would free it.
    worker = team.spawn(Worker, "@W")
    team.system.ask(worker, UserMessage(content="x"))
    wait_until(lambda: team.recorder.of_type(ProcessedMessage))
    history = team.orchestrator.get_messages()
    turns = [weakref.ref(m) for m in history if isinstance(m, (ReceivedMessage, ProcessedMessage))]
    del history
    assert turns
    gc.disable()
    try:
        assert team.orchestrator.stop().wait(5)
        wait_until(lambda: all(ref() is None for ref in turns), timeout=5)
    finally:
        gc.enable()


def test_subscribe_is_idempotent_and_unsubscribe_tolerates_strangers(
    team: Any, wait_until: Any
) -> None:
    team.orchestrator.subscribe(team.recorder)
    team.orchestrator.unsubscribe(Exploding())
    team.spawn(Worker, "@W")
    wait_until(lambda: team.recorder.of_type(StartMessage))
    team.orchestrator.get_team()  # a full round trip: everything queued was handled
    assert len(team.recorder.of_type(StartMessage)) == 1


def test_own_sends_are_not_recorded_but_member_turns_are(team: Any, wait_until: Any) -> None:
    worker = team.spawn(Worker, "@W")
    team.orchestrator.send(worker, UserMessage(content="from the orchestrator"))
    wait_until(lambda: team.recorder.of_type(ProcessedMessage))
    assert not team.recorder.of_type(SentMessage)
    assert team.recorder.of_type(ReceivedMessage)[0].sender.name == "@W"


def test_notification_subclasses_are_routed_through_the_base_handler(
    team: Any, wait_until: Any
) -> None:
    worker = team.spawn(Worker, "@W")
    team.system.proxy_ask(worker, Worker).report(Custom(content="hey"))
    wait_until(lambda: team.recorder.of_type(Custom))
    assert any(isinstance(m, Custom) for m in team.orchestrator.get_messages())


def test_state_changes_update_the_state_map_but_not_the_history(team: Any, wait_until: Any) -> None:
    class Stateful(Worker):
        def on_start(self) -> None:
            self.state = BaseState().observer(self)

    worker = team.spawn(Stateful, "@S")
    wait_until(lambda: str(worker.agent_id) in team.orchestrator.get_states())
    assert not any(
        type(m).__name__ == "StateChangedMessage" for m in team.orchestrator.get_messages()
    )


def test_events_are_recorded_and_filtered(team: Any, wait_until: Any) -> None:
    a = team.spawn(Worker, "@A")
    b = team.spawn(Worker, "@B")
    closed = ClosedNotification(message_id=a.agent_id)
    team.system.proxy_ask(a, Worker).announce(closed)
    team.system.proxy_ask(b, Worker).announce("plain")
    wait_until(lambda: len(team.recorder.of_type(EventMessage)) == 2)
    orch = team.orchestrator
    assert [e.event for e in orch.get_events(str(a.agent_id))] == [closed]
    assert [e.event for e in orch.get_events(event_class=str)] == ["plain"]
    assert len(orch.get_events()) == 2


def test_emit_message_stamps_the_team_and_records_without_processing(
    team: Any, wait_until: Any
) -> None:
    msg = UserMessage(content="banner")
    team.orchestrator.emitMessage(msg)
    recorded = team.orchestrator.get_messages()[-1]
    assert recorded.id == msg.id and recorded.team_id == team.address.team_id
    wait_until(lambda: team.recorder.of_type(UserMessage))
    assert team.recorder.of_type(UserMessage)[0].sender.name == "@Orchestrator"


def test_restore_message_replays_but_skips_team_stopping_events(team: Any, wait_until: Any) -> None:
    replayed = UserMessage(content="old")
    stopping = EventMessage(event=TeamStoppingEvent())
    team.orchestrator.restore_message(stopping)
    team.orchestrator.restore_message(replayed)
    team.orchestrator.end_restoration()
    wait_until(lambda: team.recorder.of_type(UserMessage))
    assert not team.recorder.of_type(EventMessage)
    assert team.orchestrator.get_messages()[-1].id == replayed.id


def test_an_orchestrator_says_whether_it_is_restoring_until_the_replay_ends(
    system: ActorSystem,
) -> None:
    fresh = system.proxy_ask(
        system.createActor(Orchestrator, config=BaseConfig(name="@Fresh", role="Orchestrator")),
        Orchestrator,
    )
    assert fresh.is_restoring() is False
    address = system.createActor(
        Orchestrator, restoring=True, config=BaseConfig(name="@Back", role="Orchestrator")
    )
    restoring = system.proxy_ask(address, Orchestrator)
    assert restoring.is_restoring() is True
    restoring.end_restoration()
    assert restoring.is_restoring() is False


def test_replayed_start_messages_rebuild_the_roster(team: Any) -> None:
    ghost = ActorAddressProxy(
        {"agent_id": "5b0a3a86-5a1a-4b0e-9a43-7d1b1a2b3c4d", "name": "@Ghost", "role": "G"}
    )
    start = StartMessage(config=BaseConfig(name="@Ghost", role="G"), sender=ghost)
    team.orchestrator.restore_message(start)
    assert team.orchestrator.get_team_member("@Ghost") == ghost
    team.orchestrator.restore_message(StopMessage(sender=ghost))
    assert team.orchestrator.get_team() == []


def test_get_children_or_create_returns_the_live_singleton(team: Any) -> None:
    config = BaseConfig(name="#Tool", role="ToolActor")
    first = team.orchestrator.getChildrenOrCreate(Worker, config)
    second = team.orchestrator.getChildrenOrCreate(
        Worker, BaseConfig(name="#Tool", role="ToolActor")
    )
    other = team.orchestrator.getChildrenOrCreate(
        Worker, BaseConfig(name="#Other", role="ToolActor")
    )
    assert first == second and other != first


def test_get_children_or_create_replaces_a_dead_child(team: Any, wait_until: Any) -> None:
    first = team.orchestrator.getChildrenOrCreate(Worker, BaseConfig(name="#T", role="ToolActor"))
    team.system.proxy_ask(first, Worker).stop()
    wait_until(lambda: not first.is_alive())
    again = team.orchestrator.getChildrenOrCreate(Worker, BaseConfig(name="#T", role="ToolActor"))
    assert again != first and again.is_alive()


def test_concurrent_get_children_or_create_from_8_threads_yields_one_child(team: Any) -> None:
    barrier = threading.Barrier(8)
    results: list[Any] = []
    lock = threading.Lock()

    def call() -> None:
        proxy = team.system.proxy_ask(team.address, Orchestrator, timeout=10)
        barrier.wait(5)
        address = proxy.getChildrenOrCreate(Worker, BaseConfig(name="#Singleton", role="ToolActor"))
        with lock:
            results.append(address)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(results) == 8
    assert len({r.agent_id for r in results}) == 1
    children = team.system.proxy_ask(team.address, Orchestrator)._children
    assert [c.name for c in children].count("#Singleton") == 1


def test_role_catalog_registers_by_config_role(team: Any) -> None:
    dev = AgentCard(
        agent_class=Worker,
        description="writes code",
        skills=["python", "review"],
        config=BaseConfig(name="@Dev", role="Developer"),
    )
    qa = AgentCard(
        agent_class=Worker,
        description="tests",
        skills=["testing"],
        config=BaseConfig(name="@QA", role="QA"),
    )
    orch = team.orchestrator
    orch.register_agent_profiles([dev, qa])
    assert orch.get_available_roles() == ["Developer", "QA"]
    assert orch.get_agent_profile("QA").description == "tests"
    assert [c.role for c in orch.get_profiles_by_skill("python")] == ["Developer"]
    assert orch.get_available_skills() == ["python", "review", "testing"]
    replacement = dev.model_copy(update={"description": "newer"})
    orch.register_agent_profile(replacement)
    assert orch.get_agent_catalog()["Developer"].description == "newer"


def test_members_reach_the_catalog_through_their_orchestrator(team: Any) -> None:
    card = AgentCard(
        agent_class=Worker, description="d", skills=["s"], config=BaseConfig(name="@D", role="D")
    )
    team.orchestrator.register_agent_profile(card)
    worker = team.system.proxy_ask(team.spawn(Worker, "@W"), Worker)
    assert worker.get_available_roles() == ["D"]
    assert worker.get_agent_card("D").role == "D"
    assert [c.role for c in worker.find_agents_with_skill("s")] == ["D"]
    assert [m.name for m in worker.get_team()] == ["@W"]


def test_metadata_is_replaced_wholesale_and_none_clears_it(team: Any, wait_until: Any) -> None:
    class Meta(BaseState):
        owner: str = ""

    class RichMeta(Meta):
        extra: int = 0

    orch = team.orchestrator
    assert orch.get_metadata() is None
    orch.set_metadata(RichMeta(owner="ann", extra=1))
    got = orch.get_metadata()
    assert type(got) is RichMeta and got.extra == 1
    orch.set_metadata(Meta(owner="bob"))
    assert type(orch.get_metadata()) is Meta
    orch.set_metadata(None)
    assert orch.get_metadata() is None
    assert orch.get_states() == {}
    assert not [m for m in team.recorder.messages if type(m).__name__ == "StateChangedMessage"]


@pytest.mark.parametrize("hook_fails", [False, True])
def test_lifecycle_hooks_receive_the_team_id(team: Any, hook_fails: bool) -> None:
    if hook_fails:
        team.orchestrator.subscribe(Exploding())
    team.orchestrator.stop().wait(5)
    assert team.recorder.hooks == [
        ("on_stop_request", team.address.team_id),
        ("on_stop", team.address.team_id),
    ]
