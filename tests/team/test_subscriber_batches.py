"""The team subscribers' ``on_messages``: the effect of ``on_message`` on each, in order."""

from __future__ import annotations

import threading
from uuid import UUID, uuid4

import pytest

from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.messages import (
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StateChangedMessage,
    UserMessage,
)
from akgentic.team import EventStore, PersistenceSubscriber
from akgentic.team.subscribers.activity import ActivityMonitor
from akgentic.team.subscribers.idle import IdleStopSubscriber
from akgentic.team.subscribers.persistence import PersistenceStoppedError
from akgentic.testing import wait_until
from akgentic.testing.event_store_contract import ContractState


def _sender(team_id: UUID, name: str = "@Worker") -> ActorAddressProxy:
    return ActorAddressProxy(
        {"agent_id": str(uuid4()), "name": name, "role": "Worker", "team_id": str(team_id)}
    )


def _stream(team_id: UUID) -> list[Message]:
    worker = _sender(team_id)
    out: list[Message] = []
    for i in range(6):
        message_id = uuid4()
        out.append(ReceivedMessage(message_id=message_id).init(worker, team_id))
        out.append(UserMessage(content=str(i)).init(worker, team_id))
        if i % 2:
            state = StateChangedMessage(state=ContractState(counter=i)).init(worker, team_id)
            out.append(state)
        out.append(ProcessedMessage(message_id=message_id).init(worker, team_id))
    return out


@pytest.mark.parametrize("batching", [False, True], ids=["direct", "batched"])
def test_persistence_writes_the_same_log_and_states_from_batches(
    any_store: EventStore, batching: bool
) -> None:
    one_team, batch_team = uuid4(), uuid4()
    one = PersistenceSubscriber(one_team, any_store, batching=batching)
    batched = PersistenceSubscriber(batch_team, any_store, batching=batching)
    stream = _stream(one_team)
    for message in stream:
        one.on_message(message)
    for start in range(0, len(stream), 3):
        batched.on_messages(stream[start : start + 3])
    one.flush()
    batched.flush()
    assert batched.sequence == one.sequence == batched.durable_sequence
    mine = any_store.load_events(one_team)
    theirs = any_store.load_events(batch_team)
    assert [(e.sequence, e.event) for e in theirs] == [(e.sequence, e.event) for e in mine]
    states = [(s.agent_id, s.state) for s in any_store.load_agent_states(batch_team)]
    assert states == [(s.agent_id, s.state) for s in any_store.load_agent_states(one_team)]
    one.close()
    batched.close()


def test_persistence_batches_are_skipped_while_restoring(any_store: EventStore) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store)
    subscriber.set_restoring(team_id, True)
    subscriber.on_messages(_stream(team_id))
    subscriber.set_restoring(team_id, False)
    subscriber.flush()
    assert subscriber.sequence == 0 and any_store.load_events(team_id) == []
    subscriber.close()


def test_a_stopped_persistence_raises_on_a_batch_too(any_store: EventStore) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=False)
    subscriber._failure = RuntimeError("disk gone")
    with pytest.raises(PersistenceStoppedError):
        subscriber.on_messages(_stream(team_id)[:2])
    assert subscriber.sequence == 0


def test_activity_wakes_a_waiter_when_the_ledger_empties() -> None:
    team_id = uuid4()
    sender, recipient = _sender(team_id, "@A"), _sender(team_id, "@B")
    inner = UserMessage(content="x").init(sender, team_id)
    monitor = ActivityMonitor()
    monitor.on_message(SentMessage(message=inner, recipient=recipient).init(sender, team_id))
    assert monitor.in_flight == 1
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(monitor.wait_idle(30)))
    waiter.start()
    # The waiter is counted before it sleeps: closing the entry must wake it.
    wait_until(lambda: monitor._waiters == 1)
    monitor.on_message(ProcessedMessage(message_id=inner.id).init(recipient, team_id))
    waiter.join(30)
    assert result == [True] and monitor.in_flight == 0


class _Manager:
    def stop_team(self, team_id: UUID) -> None:
        return None


def test_subclasses_of_turn_telemetry_count_like_their_bases() -> None:
    class LoudSent(SentMessage):
        pass

    class LoudReceived(ReceivedMessage):
        pass

    class LoudProcessed(ProcessedMessage):
        pass

    team_id = uuid4()
    sender, recipient = _sender(team_id, "@A"), _sender(team_id, "@B")
    inner = UserMessage(content="x").init(sender, team_id)
    monitor = ActivityMonitor()
    idle = IdleStopSubscriber(_Manager(), team_id, delay=3600)
    try:
        sent = LoudSent(message=inner, recipient=recipient).init(sender, team_id)
        received = LoudReceived(message_id=inner.id).init(recipient, team_id)
        processed = LoudProcessed(message_id=inner.id).init(recipient, team_id)
        for subscriber in (monitor, idle):
            subscriber.on_message(sent)
            subscriber.on_message(received)
        assert monitor.in_flight == 1 and monitor.changes == 1
        assert idle.timer.active_tasks == 1 and not idle.timer.is_running
        monitor.on_message(processed)
        idle.on_message(processed)
        assert monitor.in_flight == 0 and monitor.changes == 2
        assert idle.timer.active_tasks == 0 and idle.timer.is_running
    finally:
        idle.close()
