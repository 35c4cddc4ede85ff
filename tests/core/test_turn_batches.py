"""The orchestrator's recording path: send-report snapshots, envelope batches, batch hooks.

Each fast path is held to the generic one it replaces: the snapshot of a send
report against ``snapshot_model``, a subscriber's ``on_messages`` against
``on_message`` called once per message.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import ActorSystem, BaseConfig, BaseState, EventSubscriber
from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.agent import Akgent
from akgentic.core.messages import (
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StateChangedMessage,
    UserMessage,
)
from akgentic.core.messages.message import fast_construct, turn_telemetry_factory
from akgentic.core.messages.orchestrator import TelemetryBatch
from akgentic.core.orchestrator import _batch_hook
from akgentic.core.utils.addresses import sender_snapshot, snapshot_model, snapshot_sender_only


class Echo(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        return None


class Relay(Akgent[BaseConfig, BaseState]):
    """Forwards every UserMessage to its target: two members alternate in the telemetry."""

    def on_start(self) -> None:
        self.target: ActorAddress | None = None

    def set_target(self, target: ActorAddress) -> None:
        self.target = target

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        assert self.target is not None
        self.send(self.target, UserMessage(content=message.content))


def _live(system: ActorSystem, name: str = "@Live") -> ActorAddress:
    return system.createActor(Echo, config=BaseConfig(name=name, role="Live"))


def _sent(sender: Any, recipient: Any, inner: Message) -> SentMessage:
    return fast_construct(
        SentMessage,
        {"message": inner, "recipient": recipient, "sender": sender, "team_id": uuid4()},
    )


def _same(a: Message, b: Message) -> None:
    assert type(a) is type(b)
    assert a.__dict__.keys() == b.__dict__.keys()
    for name, value in a.__dict__.items():
        other = b.__dict__[name]
        if isinstance(value, Message):
            _same(value, other)
        else:
            assert value is other or value == other, name
    assert a.model_fields_set == b.model_fields_set
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__


def test_a_send_report_snapshot_matches_snapshot_model(system: ActorSystem) -> None:
    sender, recipient = _live(system, "@A"), _live(system, "@B")
    inner = UserMessage(content="hi").init(sender, uuid4())
    sent = _sent(sender, recipient, inner)
    snapshot_model(sent)  # learns the class's address fields
    fast = snapshot_sender_only(sent, sender_snapshot(sender))
    generic = snapshot_model(sent)
    _same(fast, generic)
    assert isinstance(fast.sender, ActorAddressProxy)
    assert isinstance(fast.recipient, ActorAddressProxy)
    assert isinstance(fast.message.sender, ActorAddressProxy)
    assert fast.message is not inner and fast.message.model_dump() == generic.message.model_dump()
    # Nothing live was touched.
    assert sent.sender is sender and sent.recipient is recipient and sent.message is inner
    assert inner.sender is sender


@pytest.mark.parametrize("shape", ["inner_recipient", "inner_other_sender", "inner_no_sender"])
def test_a_send_report_of_another_shape_takes_the_generic_walk(
    system: ActorSystem, shape: str
) -> None:
    sender, recipient, third = _live(system, "@A"), _live(system, "@B"), _live(system, "@C")
    inner = UserMessage(content="hi")
    if shape == "inner_recipient":
        inner.init(sender, uuid4()).recipient = third
    elif shape == "inner_other_sender":
        inner.init(third, uuid4())
    sent = _sent(sender, recipient, inner)
    snapshot_model(sent)
    fast = snapshot_sender_only(sent, sender_snapshot(sender))
    _same(fast, snapshot_model(sent))
    assert not any(
        type(a) is not ActorAddressProxy
        for a in (fast.sender, fast.recipient, fast.message.sender, fast.message.recipient)
        if a is not None
    )


def test_a_send_report_from_a_snapshot_sender_still_snapshots_its_recipient(
    system: ActorSystem,
) -> None:
    sender, recipient = _live(system, "@A"), _live(system, "@B")
    proxy = sender._snapshot()
    sent = _sent(proxy, recipient, UserMessage(content="x").init(proxy, uuid4()))
    snapshot_model(sent)
    fast = snapshot_sender_only(sent, sender_snapshot(proxy))
    _same(fast, snapshot_model(sent))
    assert isinstance(fast.recipient, ActorAddressProxy)


class Recorder(EventSubscriber):
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.batches: list[int] = []
        self._lock = threading.Lock()

    def on_message(self, msg: Message) -> None:
        with self._lock:
            self.messages.append(msg)

    def count(self, cls: type[Message]) -> int:
        with self._lock:
            return sum(isinstance(m, cls) for m in self.messages)


class BatchRecorder(Recorder):
    def on_messages(self, msgs: Sequence[Message]) -> None:
        with self._lock:
            self.batches.append(len(msgs))
            self.messages.extend(msgs)


class OverridesOnlyOnMessage(BatchRecorder):
    """Its own on_message must see every message, though a parent has on_messages."""

    def __init__(self) -> None:
        super().__init__()
        self.seen_here = 0

    def on_message(self, msg: Message) -> None:
        self.seen_here += 1
        super().on_message(msg)


class Bare:
    """Not an EventSubscriber subclass: only on_message."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def on_message(self, msg: Message) -> None:
        self.messages.append(msg)


def test_the_batch_hook_is_used_only_where_it_cannot_bypass_an_on_message() -> None:
    assert _batch_hook(BatchRecorder()) is not None
    assert _batch_hook(Recorder()) is None  # no hook: the orchestrator loops
    assert _batch_hook(OverridesOnlyOnMessage()) is None
    assert _batch_hook(Bare()) is None  # type: ignore[arg-type]
    patched = BatchRecorder()
    patched.on_message = lambda msg: None  # type: ignore[method-assign]
    assert _batch_hook(patched) is None


def _history_snapshots(team: Any) -> list[dict[str, Any]]:
    return [snapshot_model(m).model_dump() for m in team.orchestrator.get_messages()]


def test_every_subscriber_sees_the_history_snapshots_in_order_batched_or_not(
    team: Any, wait_until: Any
) -> None:
    subscribers: list[Any] = [
        BatchRecorder(),
        Recorder(),
        OverridesOnlyOnMessage(),
        Bare(),
    ]
    for subscriber in subscribers:
        team.orchestrator.subscribe(subscriber)
    first = team.spawn(Relay, "@First")
    second = team.spawn(Echo, "@Second")
    team.system.proxy_ask(first, Relay).set_target(second)
    n = 400
    for i in range(n):
        team.system.tell(first, UserMessage(content=str(i)))
    wait_until(lambda: subscribers[0].count(ProcessedMessage) >= 2 * n, timeout=60)
    wait_until(lambda: len(subscribers[3].messages) == len(subscribers[0].messages))
    expected = _history_snapshots(team)[1:]  # the orchestrator's start came before
    for subscriber in subscribers:
        # State changes are published without entering the history.
        seen = [m for m in subscriber.messages if not isinstance(m, StateChangedMessage)]
        assert [m.model_dump() for m in seen] == expected
        for message in seen:
            for address in (message.sender, message.recipient):
                assert address is None or type(address) is ActorAddressProxy
            if isinstance(message, SentMessage):
                assert type(message.message.sender) is ActorAddressProxy
    assert subscribers[2].seen_here == len(subscribers[2].messages)
    assert any(size > 1 for size in subscribers[0].batches)  # envelopes did batch


def test_a_failing_batch_hook_is_logged_and_other_subscribers_still_get_the_batch(
    team: Any, wait_until: Any, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing(BatchRecorder):
        def on_messages(self, msgs: Sequence[Message]) -> None:
            raise RuntimeError("boom")

    failing, recorder = Failing(), Recorder()
    team.orchestrator.subscribe(failing)
    team.orchestrator.subscribe(recorder)
    member = team.spawn(Echo, "@Member")
    turn = turn_telemetry_factory(ReceivedMessage)
    done = turn_telemetry_factory(ProcessedMessage)
    message_id = uuid4()
    batch = TelemetryBatch(
        [turn(message_id, member, team.address.team_id, None), done(message_id, member, None, None)]
    )
    team.address.tell(batch)
    wait_until(lambda: recorder.count(ProcessedMessage) == 1)
    assert recorder.count(ReceivedMessage) == 1
    assert "failed on a batch of 2" in caplog.text
