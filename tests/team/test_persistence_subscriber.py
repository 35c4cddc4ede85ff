"""PersistenceSubscriber fed directly with messages, against both built-in stores.

Every behaviour runs in both write modes (direct and batched); ``flush()`` is
where a batched subscriber's writes become acknowledged.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages import StartMessage, StateChangedMessage, UserMessage
from akgentic.team import DuplicateEventError, EventStore, PersistedEvent, PersistenceSubscriber
from akgentic.team.messages import EventQuarantined
from akgentic.team.subscribers.persistence import PersistenceStoppedError
from akgentic.testing.event_store_contract import ContractState, contract_messages
from akgentic.testing.event_store_poison import POISON_MARK, RefusingStore


def _sender(team_id: UUID, name: str = "@Worker") -> ActorAddressProxy:
    return ActorAddressProxy(
        {"agent_id": str(uuid4()), "name": name, "role": "Worker", "team_id": str(team_id)}
    )


@pytest.fixture(params=[False, True], ids=["direct", "batched"])
def batching(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def _state_change(
    team_id: UUID, counter: int, sender: ActorAddressProxy | None
) -> StateChangedMessage:
    message = StateChangedMessage(state=ContractState(counter=counter))
    return message.init(sender, team_id)


def test_every_message_gets_the_next_sequence_without_gaps(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    messages = contract_messages(team_id)
    for message in messages:
        subscriber.on_message(message)
    subscriber.flush()
    assert subscriber.durable_sequence == len(messages)
    events = any_store.load_events(team_id)
    assert [e.sequence for e in events] == list(range(1, len(messages) + 1))
    assert [e.event for e in events] == messages
    assert all(e.team_id == team_id for e in events)
    assert subscriber.sequence == len(messages)


def test_state_changes_upsert_a_snapshot_without_taking_a_sequence(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    worker = _sender(team_id)
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    subscriber.on_message(UserMessage(content="one").init(worker, team_id))
    subscriber.on_message(_state_change(team_id, 1, worker))
    subscriber.on_message(_state_change(team_id, 2, worker))
    subscriber.on_message(UserMessage(content="two").init(worker, team_id))
    subscriber.flush()
    assert [e.sequence for e in any_store.load_events(team_id)] == [1, 2]
    assert not any(isinstance(e.event, StateChangedMessage) for e in any_store.load_events(team_id))
    (snapshot,) = any_store.load_agent_states(team_id)
    assert snapshot.agent_id == str(worker.agent_id)
    assert snapshot.name == "@Worker"
    assert snapshot.state == ContractState(counter=2)


def test_a_state_change_without_sender_is_not_persisted(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    subscriber.on_message(_state_change(team_id, 1, None))
    subscriber.flush()
    assert any_store.load_agent_states(team_id) == []
    assert any_store.load_events(team_id) == []


def test_nothing_is_written_while_restoring(any_store: EventStore, batching: bool) -> None:
    team_id = uuid4()
    worker = _sender(team_id)
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    subscriber.set_restoring(team_id, True)
    assert subscriber.restoring
    subscriber.on_message(UserMessage(content="replayed").init(worker, team_id))
    subscriber.on_message(_state_change(team_id, 9, worker))
    subscriber.flush()
    assert any_store.load_events(team_id) == []
    assert any_store.load_agent_states(team_id) == []
    subscriber.set_restoring(team_id, False)
    subscriber.on_message(UserMessage(content="live").init(worker, team_id))
    subscriber.flush()
    assert [e.sequence for e in any_store.load_events(team_id)] == [1]


def test_a_resumed_subscriber_continues_from_the_stored_maximum(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    first = PersistenceSubscriber(team_id, any_store, batching=batching)
    for text in ("a", "b", "c"):
        first.on_message(UserMessage(content=text))
    first.flush()
    resumed = PersistenceSubscriber(
        team_id, any_store, initial_sequence=any_store.get_max_sequence(team_id), batching=batching
    )
    resumed.on_message(UserMessage(content="d"))
    resumed.close()
    events = any_store.load_events(team_id)
    assert [e.sequence for e in events] == [1, 2, 3, 4]
    assert events[-1].event.content == "d"  # type: ignore[attr-defined]


def test_a_direct_write_refused_by_the_store_does_not_consume_the_sequence(
    any_store: EventStore,
) -> None:
    team_id = uuid4()
    any_store.save_event(
        PersistedEvent(team_id=team_id, sequence=2, event=UserMessage(content="squatter"))
    )
    subscriber = PersistenceSubscriber(team_id, any_store, initial_sequence=1, batching=False)
    with pytest.raises(DuplicateEventError, match="sequence 2"):
        subscriber.on_message(UserMessage(content="refused"))
    assert subscriber.sequence == 1


def test_a_batched_write_refused_by_the_store_stops_persistence_loudly(
    any_store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    team_id = uuid4()
    any_store.save_event(
        PersistedEvent(team_id=team_id, sequence=2, event=UserMessage(content="squatter"))
    )
    subscriber = PersistenceSubscriber(team_id, any_store, initial_sequence=1, batching=True)
    subscriber.on_message(UserMessage(content="refused"))
    with pytest.raises(PersistenceStoppedError, match="last acknowledged sequence 1"):
        subscriber.flush(timeout=30)
    with pytest.raises(PersistenceStoppedError):
        subscriber.on_message(UserMessage(content="after"))
    assert [e.sequence for e in any_store.load_events(team_id)] == [2]
    assert "persistence of team" in caplog.text


def test_durable_waits_on_the_event_loop_for_the_commit_of_what_was_recorded(
    any_store: EventStore,
) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=True)
    for i in range(50):
        subscriber.on_message(UserMessage(content=str(i)))

    async def wait() -> int:
        await subscriber.durable()
        return subscriber.durable_sequence

    assert asyncio.run(wait()) >= 50
    assert any_store.get_max_sequence(team_id) >= 50
    subscriber.on_stop(team_id)


def test_durable_raises_the_failure_that_stopped_persistence(any_store: EventStore) -> None:
    team_id = uuid4()
    any_store.save_event(
        PersistedEvent(team_id=team_id, sequence=2, event=UserMessage(content="squatter"))
    )
    subscriber = PersistenceSubscriber(team_id, any_store, initial_sequence=1, batching=True)
    subscriber.on_message(UserMessage(content="refused"))
    with pytest.raises(PersistenceStoppedError, match="last acknowledged sequence 1"):
        asyncio.run(subscriber.durable(timeout=30))


def test_a_batched_subscriber_is_used_by_default_when_the_store_can_batch(
    any_store: EventStore,
) -> None:
    assert PersistenceSubscriber(uuid4(), any_store).batching is True


def test_back_pressure_keeps_a_tiny_queue_and_loses_nothing(any_store: EventStore) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=True, max_pending=1)
    for i in range(30):
        subscriber.on_message(UserMessage(content=str(i)))
    subscriber.on_stop(team_id)
    assert [e.sequence for e in any_store.load_events(team_id)] == list(range(1, 31))


def test_stopping_the_team_writes_everything_still_queued(any_store: EventStore) -> None:
    team_id = uuid4()
    worker = _sender(team_id)
    subscriber = PersistenceSubscriber(team_id, any_store, batching=True)
    for i in range(200):
        subscriber.on_message(UserMessage(content=str(i)).init(worker, team_id))
        subscriber.on_message(_state_change(team_id, i, worker))
    subscriber.on_stop_request(team_id)
    subscriber.on_stop(team_id)
    assert subscriber.durable_sequence == 200
    assert any_store.get_max_sequence(team_id) == 200
    (snapshot,) = any_store.load_agent_states(team_id)
    assert snapshot.state == ContractState(counter=199)
    subscriber.on_message(UserMessage(content="after stop"))
    subscriber.flush(timeout=30)
    assert any_store.get_max_sequence(team_id) == 201


def test_messages_from_two_threads_get_distinct_consecutive_sequences(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    barrier = threading.Barrier(2)

    def feed() -> None:
        barrier.wait(timeout=30)
        for i in range(50):
            subscriber.on_message(UserMessage(content=str(i)))

    threads = [threading.Thread(target=feed) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    subscriber.flush(timeout=30)
    assert [e.sequence for e in any_store.load_events(team_id)] == list(range(1, 101))


def test_lifecycle_hooks_refuse_another_team(any_store: EventStore, batching: bool) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    subscriber.on_stop_request(team_id)
    subscriber.on_stop(team_id)
    with pytest.raises(ValueError, match="was called for team"):
        subscriber.set_restoring(uuid4(), True)
    with pytest.raises(ValueError, match="was called for team"):
        subscriber.on_stop(uuid4())


def test_a_negative_initial_sequence_is_refused(any_store: EventStore) -> None:
    with pytest.raises(ValueError, match="initial_sequence"):
        PersistenceSubscriber(uuid4(), any_store, initial_sequence=-1)


def test_the_subscriber_records_the_orchestrator_start_as_sequence_one(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    orchestrator = _sender(team_id, "@Orchestrator")
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    start = StartMessage(config=BaseConfig(role="Orchestrator", name="@Orchestrator"))
    subscriber.on_message(start.init(orchestrator, team_id))
    subscriber.flush()
    (event,) = any_store.load_events(team_id)
    assert event.sequence == 1
    assert isinstance(event.event, StartMessage)
    assert event.event.sender == orchestrator


def test_stored_listeners_get_each_committed_event_once_in_order_before_durable_wakes(
    any_store: EventStore, batching: bool, caplog: pytest.LogCaptureFixture
) -> None:
    team_id = uuid4()
    subscriber = PersistenceSubscriber(team_id, any_store, batching=batching)
    seen: list[PersistedEvent] = []
    lock = threading.Lock()

    def listener(events: object) -> None:
        assert isinstance(events, list | tuple)
        with lock:
            seen.extend(events)

    def failing(events: object) -> None:
        raise RuntimeError("a broken view")

    subscriber.add_stored_listener(failing)
    subscriber.add_stored_listener(listener)
    messages = [UserMessage(content=str(i)) for i in range(40)]

    async def record_then_wait() -> list[int]:
        for message in messages:
            subscriber.on_message(message)
        await subscriber.durable()
        with lock:  # what the listener had when the waiter was woken
            return [e.sequence for e in seen]

    before_wake = asyncio.run(record_then_wait())
    assert before_wake == list(range(1, 41))
    subscriber.remove_stored_listener(listener)
    subscriber.on_message(UserMessage(content="after"))
    subscriber.flush()
    assert [e.event for e in seen] == messages
    assert [e.event for e in any_store.load_events(team_id)][:40] == [e.event for e in seen]
    assert any_store.get_max_sequence(team_id) == 41
    assert "stored-events listener" in caplog.text
    subscriber.on_stop(team_id)


def test_a_stored_listener_gets_a_refused_event_as_its_quarantine_record(
    any_store: EventStore, batching: bool
) -> None:
    team_id = uuid4()
    refusing: Any = RefusingStore(any_store)
    subscriber = PersistenceSubscriber(team_id, refusing, batching=batching)
    seen: list[PersistedEvent] = []
    subscriber.add_stored_listener(seen.extend)
    subscriber.on_messages(
        [
            UserMessage(content="before").init(None, team_id),
            UserMessage(content=f"{POISON_MARK} x").init(None, team_id),
            UserMessage(content="after").init(None, team_id),
        ]
    )
    subscriber.close(timeout=30.0)
    assert [e.sequence for e in seen] == [1, 2, 3]
    assert isinstance(seen[1].event, EventQuarantined)
    assert [e.event for e in seen] == [e.event for e in any_store.load_events(team_id)]
