"""Message models: defaults, stamping, markers and round trips."""

from __future__ import annotations

import dataclasses
from datetime import UTC
from uuid import UUID, uuid4

import pytest

from akgentic.core import BaseConfig, BaseState
from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.messages import (
    CancelMessage,
    ClosedNotification,
    ErrorMessage,
    EventMessage,
    HandledMessage,
    Message,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    ResultMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamStoppingEvent,
    UserMessage,
    WarningMessage,
)
from akgentic.core.messages.message import fast_construct, new_id
from akgentic.core.utils import deserialize_object


def _address(name: str = "@A") -> ActorAddressProxy:
    return ActorAddressProxy(
        {
            "__actor_address__": True,
            "__actor_type__": "x.Y",
            "agent_id": str(uuid4()),
            "name": name,
            "role": "R",
            "team_id": str(uuid4()),
            "squad_id": "",
            "is_user_proxy": False,
        }
    )


def test_message_defaults_are_a_fresh_id_and_a_utc_timestamp() -> None:
    a, b = Message(), Message()
    assert isinstance(a.id, UUID) and a.id != b.id
    assert a.id.version == 4
    assert a.timestamp is not None and a.timestamp.tzinfo is UTC
    assert a.sender is None and a.parent_id is None and a.display_type == "other"


def test_display_type_depends_on_the_message_class() -> None:
    assert UserMessage(content="x").display_type == "human"
    assert ResultMessage(content="x").display_type == "ai"
    assert CancelMessage().display_type == "other"


def test_init_sets_sender_parent_and_converts_a_string_team_id() -> None:
    parent = UserMessage(content="cause")
    sender = _address()
    team = uuid4()
    msg = ResultMessage(content="effect").init(sender, str(team), parent)
    assert msg.sender is sender
    assert msg.parent_id == parent.id
    assert msg.team_id == team


def test_every_dump_carries_the_model_marker() -> None:
    dumped = UserMessage(content="hi").model_dump()
    assert dumped["__model__"] == "akgentic.core.messages.message.UserMessage"


@pytest.mark.parametrize(
    "message",
    [
        UserMessage(content="hi"),
        ResultMessage(content="done"),
        CancelMessage(reason="enough"),
        StartMessage(config=BaseConfig(name="@A", role="A"), parent=_address()),
        StopMessage(),
        SentMessage(message=UserMessage(content="x"), recipient=_address()),
        ReceivedMessage(message_id=uuid4()),
        ProcessedMessage(message_id=uuid4()),
        HandledMessage(message_id=uuid4()),
        ErrorMessage(content_type="ValueError", content="bad", traceback="tb"),
        WarningMessage(content_type="WarningError", content="careful"),
        StateChangedMessage(state=BaseState()),
        EventMessage(event=ClosedNotification(message_id=uuid4())),
        EventMessage(event=TeamStoppingEvent()),
    ],
    ids=lambda m: type(m).__name__,
)
def test_round_trip_keeps_the_concrete_class_and_fields(message: Message) -> None:
    dumped = message.model_dump()
    restored = deserialize_object(dumped)
    assert type(restored) is type(message)
    assert restored.model_dump() == dumped
    again = Message.model_validate(message.model_dump_json() and dumped)
    assert type(again) is type(message)


def test_json_round_trip_through_model_validate_json_text() -> None:
    msg = SentMessage(message=UserMessage(content="x"), recipient=_address("@B"))
    restored = SentMessage.model_validate_json(msg.model_dump_json())
    assert isinstance(restored.message, UserMessage)
    assert restored.recipient.name == "@B"
    assert isinstance(restored.recipient, ActorAddressProxy)


def test_warning_and_error_are_siblings_not_parent_and_child() -> None:
    assert issubclass(ErrorMessage, NotificationMessage)
    assert issubclass(WarningMessage, NotificationMessage)
    assert not issubclass(WarningMessage, ErrorMessage)
    assert not issubclass(ErrorMessage, WarningMessage)


def test_legacy_notification_payload_without_content_still_loads() -> None:
    payload = {"__model__": "akgentic.core.messages.orchestrator.ErrorMessage", "id": str(uuid4())}
    restored = deserialize_object(payload)
    assert isinstance(restored, ErrorMessage)
    assert restored.content == ""


def test_legacy_payload_with_unknown_keys_loads() -> None:
    payload = UserMessage(content="x").model_dump()
    payload["removed_field"] = 1
    assert isinstance(deserialize_object(payload), UserMessage)


def test_event_payloads_are_frozen_dataclasses_not_messages() -> None:
    for cls in (ClosedNotification, TeamStoppingEvent):
        assert dataclasses.is_dataclass(cls)
        assert not issubclass(cls, Message)
    event = ClosedNotification(message_id=uuid4())
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.message_id = uuid4()  # type: ignore[misc]


def test_fast_construct_matches_validated_construction() -> None:
    fields = {"message_id": uuid4(), "sender": _address()}
    fast = fast_construct(ReceivedMessage, dict(fields))
    slow = ReceivedMessage(**fields)
    assert fast.model_dump().keys() == slow.model_dump().keys()
    assert fast.message_id == slow.message_id and fast.display_type == slow.display_type
    assert fast.id != slow.id


def test_new_id_is_a_version_4_uuid() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(i.version == 4 and i.variant == "specified in RFC 4122" for i in ids)
    assert UUID(str(next(iter(ids)))) in ids
