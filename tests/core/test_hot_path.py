"""The per-message fast paths keep the telemetry contract: order, ids, snapshots, overrides."""

from __future__ import annotations

import copy
import pickle
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import ActorSystem, BaseConfig, BaseState, Orchestrator
from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.actor_address_impl import ActorAddressImpl
from akgentic.core.agent import Akgent
from akgentic.core.mailbox import Inbox, peek_messages
from akgentic.core.messages import (
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    UserMessage,
)
from akgentic.core.messages.message import fast_construct, turn_telemetry_factory
from akgentic.core.messages.orchestrator import HandledMessage, TelemetryBatch
from akgentic.core.utils.addresses import snapshot_addresses, snapshot_model
from akgentic.core.utils.fastmodel import SharedFieldsSet


class Counter(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.count = 0

    def receiveMsg_UserMessage(self, message: UserMessage) -> int:
        self.count += 1
        return self.count


class CountingOrchestrator(Orchestrator):
    """Overrides one turn handler: it must still run for every ProcessedMessage."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.processed = 0

    def receiveMsg_ProcessedMessage(
        self, message: ProcessedMessage, sender: ActorAddress | None
    ) -> Any:
        self.processed += 1
        return self.SUPER

    def processed_count(self) -> int:
        return self.processed


def _live_address(system: ActorSystem) -> ActorAddress:
    return system.createActor(Counter, config=BaseConfig(name="@Live", role="Live"))


def test_turn_factory_builds_what_fast_construct_builds(system: ActorSystem) -> None:
    sender = _live_address(system)
    team_id, message_id, parent_id = uuid4(), uuid4(), uuid4()
    for cls in (ReceivedMessage, ProcessedMessage, HandledMessage):
        fast = turn_telemetry_factory(cls)(message_id, sender, team_id, parent_id)
        generic = fast_construct(
            cls,
            {
                "message_id": message_id,
                "sender": sender,
                "team_id": team_id,
                "parent_id": parent_id,
            },
        )
        assert type(fast) is cls
        assert list(fast.__dict__) == list(cls.model_fields)  # declaration order
        assert list(generic.__dict__) == list(cls.model_fields)
        for name in ("message_id", "sender", "team_id", "parent_id", "recipient", "display_type"):
            assert getattr(fast, name) == getattr(generic, name)
        assert fast.model_fields_set == generic.model_fields_set
        assert fast.model_fields_set is not generic.model_fields_set
        assert fast.id != generic.id and fast.id.version == 4
        assert fast.timestamp is not None and fast.timestamp.tzinfo is not None
        assert cls.model_validate(fast.model_dump()).id == fast.id


def test_turn_telemetry_shares_one_read_only_fields_set_copied_on_write(
    system: ActorSystem,
) -> None:
    sender = _live_address(system)
    build = turn_telemetry_factory(ReceivedMessage)
    a = build(uuid4(), sender, uuid4(), None)
    b = build(uuid4(), sender, uuid4(), None)
    expected = {"message_id", "sender", "team_id", "parent_id"}
    # Reads like a plain set (a set's order follows the per-process string hash, so
    # the text is checked piece by piece, not against another set's repr).
    shown = repr(a.model_fields_set)
    assert a.model_fields_set == expected and shown[0] == "{" and shown[-1] == "}"
    assert sorted(shown[1:-1].split(", ")) == sorted(repr(name) for name in expected)
    assert a.model_fields_set is b.model_fields_set  # one shared set
    with pytest.raises(TypeError):
        a.model_fields_set.add("recipient")
    # Assigning a field gives that instance its own set; the others are untouched.
    a.recipient = sender
    assert a.model_fields_set == expected | {"recipient"}
    assert type(a.model_fields_set) is set
    assert b.model_fields_set == expected
    # Copies get ordinary mutable sets.
    copied = b.model_copy(update={"display_type": "ai"})
    assert copied.model_fields_set == expected | {"display_type"}
    assert b.model_fields_set == expected
    assert type(copy.copy(b).model_fields_set) is set
    assert type(copy.deepcopy(build(uuid4(), None, None, None)).model_fields_set) is set
    # A snapshot reuses the shared set; assigning on it copies too.
    snapshot = snapshot_model(b)
    assert snapshot.model_fields_set is b.model_fields_set
    snapshot.team_id = None
    assert b.model_fields_set == expected and snapshot.model_fields_set == expected
    # Unpickled siblings stay copy-on-write.
    pair = [build(uuid4(), None, None, None), build(uuid4(), None, None, None)]
    c, d = pickle.loads(pickle.dumps(pair))
    c.team_id = uuid4()
    assert isinstance(d.model_fields_set, SharedFieldsSet) and d.model_fields_set == expected
    assert c.model_fields_set == expected


def test_fast_construct_shares_one_fields_set_per_field_combination(system: ActorSystem) -> None:
    sender = _live_address(system)
    inner = UserMessage(content="x")

    def sent() -> SentMessage:
        fields = {"message": inner, "recipient": sender, "sender": sender, "team_id": uuid4()}
        return fast_construct(SentMessage, fields)

    a, b = sent(), sent()
    expected = {"message", "recipient", "sender", "team_id"}
    assert a.model_fields_set is b.model_fields_set and a.model_fields_set == expected
    other = fast_construct(SentMessage, {"message": inner, "sender": sender})
    assert other.model_fields_set == {"message", "sender"}
    assert other.model_fields_set is not a.model_fields_set
    with pytest.raises(TypeError):
        a.model_fields_set.add("parent_id")
    a.parent_id = uuid4()  # copy on write: only ``a`` records the assignment
    assert a.model_fields_set == expected | {"parent_id"} and b.model_fields_set == expected


class _OwnSetattr(UserMessage):
    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


def test_fast_construct_gives_a_class_with_its_own_setattr_a_private_set() -> None:
    a = fast_construct(_OwnSetattr, {"content": "a"})
    b = fast_construct(_OwnSetattr, {"content": "b"})
    assert a.model_fields_set == {"content"} and a.model_fields_set is not b.model_fields_set
    assert type(a.model_fields_set) is set


def test_a_telemetry_batch_is_its_own_envelope_and_never_peeked_as_mail() -> None:
    batch = TelemetryBatch([UserMessage(content="a")])
    assert batch.message is batch and batch.reply_to is None
    inbox = Inbox()
    inbox.put(batch)
    assert peek_messages(inbox) == []
    assert inbox.get() is batch


def test_snapshot_model_swaps_only_live_addresses_and_never_mutates(system: ActorSystem) -> None:
    live = _live_address(system)
    received = ReceivedMessage(message_id=uuid4(), sender=live)
    snapshot = snapshot_model(received)
    assert snapshot is not received and received.sender is live
    assert isinstance(snapshot.sender, ActorAddressProxy)
    assert snapshot.sender is snapshot_model(received).sender  # cached per live address
    assert snapshot.id == received.id and snapshot.model_fields_set == received.model_fields_set
    assert snapshot.model_fields_set is not received.model_fields_set
    assert snapshot_model(snapshot) is snapshot  # nothing live left: same object
    # With a recipient too, the generic walk handles both fields.
    both = ReceivedMessage(message_id=uuid4(), sender=live, recipient=live)
    copied = snapshot_addresses(both)
    assert isinstance(copied.sender, ActorAddressProxy)
    assert isinstance(copied.recipient, ActorAddressProxy)
    assert both.recipient is live


def test_a_burst_is_recorded_in_order_with_one_received_and_processed_each(
    team: Any, wait_until: Any
) -> None:
    counter = team.spawn(Counter, "@Counter")
    n = 3000
    messages = [UserMessage(content=str(i)) for i in range(n)]
    for message in messages:
        team.system.tell(counter, message)
    wait_until(lambda: len(team.recorder.of_type(ProcessedMessage)) >= n, timeout=60)

    def turns(stream: list[Message]) -> list[tuple[str, Any]]:
        return [
            (type(m).__name__, m.message_id)
            for m in stream
            if isinstance(m, ReceivedMessage | ProcessedMessage)
            and m.sender is not None
            and m.sender.name == "@Counter"
        ]

    expected = []
    for message in messages:
        expected += [("ReceivedMessage", message.id), ("ProcessedMessage", message.id)]
    history = team.orchestrator.get_messages()
    assert turns(history) == expected
    assert turns(team.recorder.messages) == expected
    live = [m for m in history if isinstance(m, ProcessedMessage) and m.sender == counter]
    assert len(live) == n and all(isinstance(m.sender, ActorAddressImpl) for m in live)
    seen = team.recorder.of_type(ProcessedMessage)
    assert all(isinstance(m.sender, ActorAddressProxy) for m in seen)
    assert [m.id for m in seen] == [m.id for m in live]
    assert all(m.parent_id == m.message_id for m in live)
    assert len({m.id for m in history}) == len(history)


def test_an_orchestrator_overriding_a_turn_handler_keeps_generic_dispatch(
    system: ActorSystem, wait_until: Any
) -> None:
    address = system.createActor(
        CountingOrchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
    )
    orchestrator = system.proxy_ask(address, CountingOrchestrator)
    counter = orchestrator.createActor(Counter, config=BaseConfig(name="@C", role="C"))
    for i in range(50):
        system.tell(counter, UserMessage(content=str(i)))
    wait_until(lambda: orchestrator.processed_count() == 50)
    history = orchestrator.get_messages(message_type=ProcessedMessage)
    assert len(history) == 50  # SUPER fell through to the base handler, which recorded


def test_turn_telemetry_claiming_the_orchestrator_as_sender_is_never_recorded(
    team: Any, wait_until: Any
) -> None:
    member = team.spawn(Counter, "@Member")
    own = ActorAddressProxy(team.address.serialize())  # equal agent id, another object
    foreign = ActorAddressProxy(member.serialize())
    for sender in (own, foreign, own, foreign):
        message = ReceivedMessage(message_id=uuid4(), sender=sender)
        team.address.tell(TelemetryBatch([message]))
        team.address.tell(message)
    wait_until(lambda: len(team.orchestrator.get_messages(message_type=ReceivedMessage)) == 4)
    recorded = team.orchestrator.get_messages(message_type=ReceivedMessage)
    assert all(m.sender is foreign for m in recorded)


def test_sender_only_snapshot_matches_snapshot_model(system: ActorSystem) -> None:
    from akgentic.core.utils.addresses import sender_snapshot, snapshot_sender_only

    sender = _live_address(system)
    team_id, message_id = uuid4(), uuid4()
    received = turn_telemetry_factory(ReceivedMessage)(message_id, sender, team_id, None)
    snapshot_model(received)  # learns the class's address fields
    fast = snapshot_sender_only(received, sender_snapshot(sender))
    generic = snapshot_model(received)
    assert fast is not received and fast.__dict__ == generic.__dict__
    assert isinstance(fast.sender, ActorAddressProxy) and received.sender is sender
    assert fast.model_fields_set == generic.model_fields_set
    proxy_sent = turn_telemetry_factory(ReceivedMessage)(message_id, sender._snapshot(), None, None)
    assert snapshot_sender_only(proxy_sent, sender_snapshot(proxy_sent.sender)) is proxy_sent
    nobody = turn_telemetry_factory(ReceivedMessage)(message_id, None, None, None)
    assert snapshot_sender_only(nobody, sender_snapshot(None)) is nobody
    with_recipient = UserMessage(content="x", sender=sender, recipient=sender)
    copy_ = snapshot_sender_only(with_recipient, sender_snapshot(sender))
    assert isinstance(copy_.recipient, ActorAddressProxy)  # generic path


def test_live_address_feeds_inbox_directly(system: ActorSystem) -> None:
    address = _live_address(system)
    assert isinstance(address, ActorAddressImpl)
    assert isinstance(address.actor_ref.actor_inbox, Inbox)
    assert address._post is not None
    for _ in range(5):
        address.tell(UserMessage(content="hi"))
    assert system.ask(address, UserMessage(content="last")) == 6
