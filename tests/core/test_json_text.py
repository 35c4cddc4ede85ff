"""The directly written JSON text of a model is the generic encoder's text, byte for byte."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum
from typing import Any
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ConfigDict, TypeAdapter, field_serializer

from akgentic.core.actor_address import ActorAddressProxy, ActorAddressStopped
from akgentic.core.messages import Message, UserMessage
from akgentic.core.messages.message import new_id
from akgentic.core.messages.orchestrator import ProcessedMessage, ReceivedMessage, SentMessage
from akgentic.core.utils.encodable import encodable, encodable_text
from akgentic.core.utils.json_text import datetime_json_text, model_json_text
from akgentic.core.utils.serializer import SerializableBaseModel, serialize
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.codec import (
    compact_dumps,
    decode_event,
    encode_event,
    encode_event_data,
    encode_event_row,
    loads,
)

_PYDANTIC_UTC = TypeAdapter(datetime).validate_python("2026-01-02T03:04:05.000006Z").tzinfo


class _Uid(UUID):
    pass


class _Colour(StrEnum):
    RED = "red"
    QUOTE = 'q"\\'


class _Text(str):
    pass


@dataclasses.dataclass
class _Point:
    x: int
    at: UUID


class _Moment(datetime):
    pass


class Payload(SerializableBaseModel):
    """A model whose fields take any value, the way extension messages do."""

    model_config = ConfigDict(extra="allow")

    anything: Any = None
    more: list[Any] = []
    when: Any = None
    shouted: str = ""

    @field_serializer("shouted")
    def _shout(self, value: str) -> str:
        return value.upper()


class RichMessage(Message):
    body: Any = None
    nested: Payload | None = None
    who: Any = None


class SubUserMessage(UserMessage):
    extra_note: str = "sub"


def _address(name: str, actor_type: str = "pkg.Agent", squad: bool = True) -> dict[str, Any]:
    return {
        "__actor_address__": True,
        "__actor_type__": actor_type,
        "agent_id": str(uuid4()),
        "name": name,
        "role": name.strip("@") or "role",
        "team_id": str(uuid4()),
        "squad_id": str(uuid4()) if squad else "",
        "is_user_proxy": False,
    }


def _generic(event: PersistedEvent) -> str:
    """The reference: the stored text as it has always been made."""
    return compact_dumps(event.model_dump())


_hostile_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F)),
    st.sampled_from(
        [
            "",
            '"',
            "\\",
            "\x00\x1f\x7f",
            "\u2028\u2029",
            "\ufeff",
            "é\U0001f600",
            "\ud800",
            "a\udfffb",
        ]
    ),
    st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010)),
)

_datetimes = st.one_of(
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))])),
    st.datetimes(),  # naive
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.replace(microsecond=0)),
    st.datetimes(timezones=st.just(_PYDANTIC_UTC)),
    st.datetimes(timezones=st.just(UTC)).map(
        lambda d: _Moment(d.year, d.month, d.day, d.hour, tzinfo=UTC)
    ),
)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**64, -(2**70)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-7, 1e16, -0.0, 5e-324]),
    _hostile_text,
    _hostile_text.map(_Text),
    st.sampled_from(list(_Colour)),
    st.uuids(),
    st.uuids().map(lambda u: _Uid(int=u.int)),
    _datetimes,
    st.binary(max_size=8),
    st.builds(_Point, st.integers(), st.uuids()),
    st.sampled_from([int, Payload]),
)

_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(_hostile_text, st.integers()), inner, max_size=3),
        st.builds(Payload, anything=inner, more=st.lists(inner, max_size=2), when=inner),
    ),
    max_leaves=8,
)


@st.composite
def _events(draw: st.DrawFn) -> PersistedEvent:
    sender = ActorAddressProxy(_address(draw(_hostile_text), squad=draw(st.booleans())))
    recipient_cls = draw(st.sampled_from([ActorAddressProxy, ActorAddressStopped]))
    recipient = recipient_cls(_address(draw(_hostile_text), actor_type=draw(_hostile_text)))
    team_id = draw(st.sampled_from([uuid4(), new_id(), _Uid(int=3)]))
    kind = draw(st.sampled_from(["user", "sub", "sent", "received", "rich"]))
    user_cls = SubUserMessage if kind == "sub" else UserMessage
    user = user_cls(content=draw(_hostile_text)).init(sender, team_id)
    user.timestamp = draw(_datetimes)
    message: Message
    if kind == "sent":
        message = SentMessage(message=user, recipient=recipient).init(sender, team_id)
    elif kind == "received":
        cls = draw(st.sampled_from([ReceivedMessage, ProcessedMessage]))
        message = cls(message_id=user.id).init(sender, team_id, user)
    elif kind == "rich":
        nested = Payload(anything=draw(_values), shouted=draw(_hostile_text), surplus=draw(_values))
        message = RichMessage(
            body=draw(_values), nested=nested, who=draw(st.sampled_from([sender, None]))
        )
    else:
        message = user
    message.timestamp = draw(st.one_of(_datetimes, st.none()))
    event = PersistedEvent(team_id=team_id, sequence=draw(st.integers(1, 2**70)), event=message)
    event.timestamp = draw(_datetimes)
    return event


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events())
def test_the_written_text_is_the_generic_text_for_hostile_events(event: PersistedEvent) -> None:
    expected = _generic(event)
    assert encode_event(event) == expected
    assert encode_event(event) == expected  # again, with every cache warm
    stamp, text = encode_event_row(event)
    assert text == expected
    assert stamp == encode_event_data(event)[0]["timestamp"]
    fast = model_json_text(event)
    assert fast is None or fast == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events())
def test_the_written_text_decodes_back_to_the_same_event(event: PersistedEvent) -> None:
    text = encode_event(event)
    if model_json_text(event) is None:
        return  # the generic path's own business (a lone surrogate: tested there)
    decoded = decode_event(text, event.team_id, event.sequence)
    assert encode_event(decoded) == text == _generic(decoded)
    assert loads(text) == json.loads(text)


def test_the_events_a_team_logs_are_written_directly() -> None:
    # The fast path must really be taken for the telemetry of a plain message,
    # else the differential tests above would pass on the generic path alone.
    sender = ActorAddressProxy(_address("@Entry"))
    recipient = ActorAddressProxy(_address("@Echo"))
    team_id = new_id()
    user = UserMessage(content="message 1").init(sender, team_id)
    events = [
        SentMessage(message=user, recipient=recipient).init(sender, team_id),
        ReceivedMessage(message_id=user.id).init(recipient, team_id, user),
        ProcessedMessage(message_id=user.id).init(recipient, team_id, user),
    ]
    for sequence, message in enumerate(events, 1):
        event = PersistedEvent(team_id=team_id, sequence=sequence, event=message)
        text = model_json_text(event)
        assert text is not None
        assert text == _generic(event)
        assert loads(text)["event"]["sender"] == message.sender.serialize()  # type: ignore[union-attr]


def test_a_lone_surrogate_leaves_the_text_to_the_generic_encoder() -> None:
    sender = ActorAddressProxy(_address("bad \ud800 name"))
    event = PersistedEvent(
        team_id=uuid4(), sequence=1, event=UserMessage(content="x").init(sender, uuid4())
    )
    assert model_json_text(event) is None
    assert encode_event(event) == _generic(event)
    float_event = PersistedEvent(
        team_id=uuid4(), sequence=1, event=RichMessage(body=[1e-7, "\udfff"])
    )
    assert model_json_text(float_event) is None
    # json.dumps decided: its spelling of the float, not pydantic-core's.
    assert "1e-07" in encode_event(float_event) == _generic(float_event)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 600000),
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=-3))),
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(seconds=1))),
    ],
)
def test_a_datetime_is_written_as_isoformat(moment: datetime) -> None:
    assert datetime_json_text(moment) == moment.isoformat()
    assert datetime_json_text(moment) == moment.isoformat()  # the remembered one
    assert serialize(moment) == moment.isoformat()


def test_a_snapshot_writes_its_address_text_once() -> None:
    proxy = ActorAddressProxy(_address("@Echo"))
    first = PersistedEvent(team_id=uuid4(), sequence=1, event=UserMessage(content="a"))
    first.event.sender = proxy
    assert encode_event(first) == _generic(first)
    assert proxy._json is not None
    assert json.loads(proxy._json) == proxy.serialize()


def test_an_int_beyond_the_digit_limit_of_str_is_written_like_pydantic_core() -> None:
    event = PersistedEvent(
        team_id=uuid4(), sequence=1, event=RichMessage(body=[10**5000, -(10**4400)])
    )
    assert encode_event(event) == _generic(event)
    assert model_json_text(event) is not None


def test_utc_datetimes_in_and_across_seconds_are_written_as_isoformat() -> None:
    start = datetime(2026, 12, 31, 23, 59, 58, 999998, tzinfo=UTC)
    steps = [0, 1, 2, 3, 1_000_000, -1, -2_000_001, 86_400_000_000, 2, -86_400_000_003]
    moment = start
    for step in steps:
        moment = moment + timedelta(microseconds=step)
        assert datetime_json_text(moment) == moment.isoformat()
        same_second = moment.replace(microsecond=0)
        assert datetime_json_text(same_second) == same_second.isoformat()


def test_a_field_missing_from_the_instance_dict_is_written_like_the_dump_does() -> None:
    message = UserMessage.model_construct(content="x")
    del message.__dict__["recipient"]
    event = PersistedEvent(team_id=uuid4(), sequence=1, event=message)
    assert model_json_text(event) == _generic(event)
    assert loads(encode_event(event))["event"]["recipient"] is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events())
def test_the_stored_text_always_encodes_to_utf8(event: PersistedEvent) -> None:
    # A lone surrogate (a file name that is not UTF-8) must never reach a store.
    encode_event(event).encode("utf-8")
    encode_event_row(event)[1].encode("utf-8")


def test_lone_surrogates_are_written_as_readable_escapes() -> None:
    name = os.fsdecode(b"caf\xe9-\xff.txt")
    assert encodable_text(name) == "caf\\xe9-\\xff.txt"
    assert encodable_text("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert encodable_text("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600"  # valid: kept
    stored = "caf\\xe9-\\xff.txt"
    assert encodable({name: [name, ("x", 1)]}) == {stored: [stored, ["x", 1]]}
    event = PersistedEvent(team_id=uuid4(), sequence=1, event=UserMessage(content=name))
    assert model_json_text(event) is None  # the fast writer leaves it to the generic path
    assert loads(encode_event(event))["event"]["content"] == "caf\\xe9-\\xff.txt"
