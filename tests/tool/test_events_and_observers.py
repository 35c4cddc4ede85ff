"""Tool state events, command announcements and the observer protocols."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.messages.message import Message
from akgentic.core.utils.serializer import SerializableBaseModel, deserialize_object, serialize
from akgentic.tool import (
    ActorToolObserver,
    CommandArg,
    CommandDescriptor,
    CommandsAnnouncedEvent,
    ToolObserver,
    ToolStateCarrier,
    ToolStateEvent,
    ToolStateSequence,
)
from akgentic.tool.mailbox import MailboxToolObserver
from akgentic.tool.model import ModelRow, ModelSwitchToolObserver
from akgentic.tool.team import TeamManagementToolObserver
from akgentic.tool.testing import RecordingObserver, ToolStateHolder


class EntitiesAdded(SerializableBaseModel):
    """A domain delta the envelope knows nothing about."""

    names: list[str]


def _address(name: str) -> ActorAddress:
    return ActorAddressProxy({"agent_id": str(uuid4()), "name": name, "role": "Worker"})


def test_a_tool_state_event_is_a_message() -> None:
    event = ToolStateEvent(tool_id="#Board", seq=1, payload=EntitiesAdded(names=["a"]))
    assert isinstance(event, Message)
    assert isinstance(event.id, UUID)


def test_a_tool_state_event_round_trips_with_its_concrete_payload() -> None:
    event = ToolStateEvent(tool_id="#Board", seq=3, payload=EntitiesAdded(names=["a", "b"]))
    again = deserialize_object(serialize(event))
    assert isinstance(again, ToolStateEvent)
    assert isinstance(again.payload, EntitiesAdded) and again.payload.names == ["a", "b"]
    assert again == event


def test_the_sequence_numbers_events_from_one_without_gaps() -> None:
    sequence = ToolStateSequence("#Board")
    seqs = [sequence.next_event(EntitiesAdded(names=[])).seq for _ in range(3)]
    assert seqs == [1, 2, 3]
    assert sequence.last_seq == 3


def test_each_tool_numbers_its_own_stream() -> None:
    first, second = ToolStateSequence("#A"), ToolStateSequence("#B")
    first.next_event(EntitiesAdded(names=[]))
    event = second.next_event(EntitiesAdded(names=[]))
    assert (event.tool_id, event.seq) == ("#B", 1)


def test_a_restored_sequence_continues_after_its_last_number() -> None:
    assert ToolStateSequence("#A", last_seq=7).next_event(EntitiesAdded(names=[])).seq == 8


def test_a_commands_announced_event_round_trips() -> None:
    descriptor = CommandDescriptor(
        name="shout",
        description="Say it loud.",
        args=[CommandArg(name="text", type="str", required=True, rest_of_line=True)],
        tool_card="ShoutTool",
    )
    event = CommandsAnnouncedEvent(agent=_address("@Writer"), commands=[descriptor])
    again = deserialize_object(serialize(event))
    assert isinstance(again, CommandsAnnouncedEvent)
    assert again.commands == [descriptor]
    assert again.agent.name == "@Writer"


def test_command_records_are_tagged_with_their_class_path() -> None:
    dumped = CommandArg(name="x", type="int", required=False).model_dump()
    assert dumped["__model__"] == "akgentic.tool.commands.models.CommandArg"


class EventsOnly:
    def notify_event(self, event: object) -> None:
        return None


class Mailboxish(EventsOnly):
    def get_mailbox(self) -> list[Message]:
        return []

    def consume_mailbox(self, ids: Sequence[UUID] | Sequence[str]) -> list[Message]:
        return []


class Actorish(RecordingObserver):
    """An actor-level observer with nothing more."""


class Teamish(RecordingObserver):
    def createActor(self, actor_class: type[Any], *, config: Any) -> ActorAddress:
        return _address("@hired")

    def on_hire(self, address: ActorAddress) -> None:
        return None

    def on_fire(self, address: ActorAddress) -> None:
        return None


class Modelish(RecordingObserver):
    def list_model_rows(self) -> list[ModelRow]:
        return []

    def switch_model(self, key: str) -> str:
        return key


class ModelishWithoutSwitch(RecordingObserver):
    def list_model_rows(self) -> list[ModelRow]:
        return []


class TeamishWithoutOnFire(RecordingObserver):
    def createActor(self, actor_class: type[Any], *, config: Any) -> ActorAddress:
        return _address("@hired")

    def on_hire(self, address: ActorAddress) -> None:
        return None


def test_an_event_emitter_is_a_tool_observer_but_not_an_actor_one() -> None:
    assert isinstance(EventsOnly(), ToolObserver)
    assert not isinstance(EventsOnly(), ActorToolObserver)


def test_the_recording_observer_is_an_actor_tool_observer() -> None:
    observer = Actorish()
    assert isinstance(observer, ActorToolObserver)
    assert isinstance(observer.state, ToolStateCarrier)


def test_a_mailbox_observer_needs_no_actor_reach() -> None:
    assert isinstance(Mailboxish(), MailboxToolObserver)
    assert not isinstance(Mailboxish(), ActorToolObserver)
    assert not isinstance(EventsOnly(), MailboxToolObserver)


def test_team_and_model_observers_are_siblings_not_ancestors() -> None:
    assert isinstance(Teamish(), TeamManagementToolObserver)
    assert not isinstance(Teamish(), ModelSwitchToolObserver)
    assert isinstance(Modelish(), ModelSwitchToolObserver)
    assert not isinstance(Modelish(), TeamManagementToolObserver)


def test_every_protocol_member_is_required_for_conformance() -> None:
    # Mutation-style guard: drop one member, lose conformance.
    assert not isinstance(ModelishWithoutSwitch(), ModelSwitchToolObserver)
    assert not isinstance(TeamishWithoutOnFire(), TeamManagementToolObserver)
    assert not isinstance(Actorish(), TeamManagementToolObserver)


def test_the_state_carrier_is_anything_with_a_tool_state() -> None:
    assert isinstance(ToolStateHolder(), ToolStateCarrier)
    assert not isinstance(object(), ToolStateCarrier)


def test_a_model_row_has_no_defaults() -> None:
    with pytest.raises(ValueError, match="context_length"):
        ModelRow.model_validate(
            {"key": "openai:gpt-5", "provider": "openai", "model": "gpt-5", "active": True}
        )
    row = ModelRow(key="a:b", provider="a", model="b", context_length=None, active=False)
    assert row.context_length is None
