"""The fast paths of the serializer and the store codec behave like the plain ones."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic import field_serializer
from pydantic_core import to_json

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy, ActorAddressStopped
from akgentic.core.messages import UserMessage
from akgentic.core.utils.serializer import (
    SerializableBaseModel,
    deserialize_object,
    serialize,
    serialize_base_model_for_json,
    serialize_for_json,
    shared_addresses,
)
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.codec import compact_dumps, encode_event, encode_event_data, loads


def _address(name: str = "@Echo") -> dict[str, Any]:
    return {
        "__actor_address__": True,
        "__actor_type__": "pkg.Agent",
        "agent_id": str(uuid4()),
        "name": name,
        "role": "Echo",
        "team_id": str(uuid4()),
        "squad_id": "",
        "is_user_proxy": False,
    }


class Inner(SerializableBaseModel):
    who: Any = None
    tags: list[str] = []


class Outer(SerializableBaseModel):
    inner: Inner
    items: list[Any] = []
    mapping: dict[str, Any] = {}
    count: int = 0


def test_shared_addresses_reuses_one_proxy_per_distinct_address() -> None:
    data, other = _address(), _address("@Other")
    with shared_addresses():
        first = deserialize_object(dict(data))
        second = deserialize_object(dict(data))
        third = deserialize_object(other)
        with shared_addresses():  # nested blocks share the outer cache
            fourth = deserialize_object(dict(data))
    assert isinstance(first, ActorAddressProxy)
    assert first is second is fourth
    assert third is not first and third.name == "@Other"
    assert first.serialize() == ActorAddressProxy(data).serialize()


def test_without_the_block_each_address_is_new() -> None:
    data = _address()
    with shared_addresses():
        pass
    assert deserialize_object(data) is not deserialize_object(data)
    assert deserialize_object(data) == deserialize_object(data)


def test_a_context_resolver_still_decides() -> None:
    seen: list[dict[str, Any]] = []

    class Resolver:
        def resolve_address(self, address: dict[str, Any]) -> ActorAddress:
            seen.append(address)
            return ActorAddressProxy(address)

    data = _address()
    with shared_addresses():
        a = deserialize_object(data, Resolver())
        b = deserialize_object(data, Resolver())
    assert len(seen) == 2 and a is not b


def test_unhashable_address_values_are_not_shared() -> None:
    data = {**_address(), "extra": ["x"]}
    with shared_addresses():
        a, b = deserialize_object(data), deserialize_object(data)
    assert a is not b and a == b


def test_nested_models_load_the_same_with_the_preloaded_skip() -> None:
    address = _address()
    model = Outer(
        inner=Inner(who=ActorAddressProxy(address), tags=["a", "b"]),
        items=[Inner(tags=["c"]), b"raw", int, {"k": [1, 2]}],
        mapping={"x": Inner(who=None), "y": [b"z"]},
        count=3,
    )
    dumped = serialize(model)
    loaded = deserialize_object(json.loads(json.dumps(dumped)))
    assert isinstance(loaded, Outer)
    assert serialize(loaded) == dumped
    assert Outer.model_validate(json.loads(json.dumps(dumped))) == loaded
    assert loaded.items[1] == b"raw" and loaded.items[2] is int
    assert isinstance(loaded.inner.who, ActorAddressProxy)


def test_canonical_uuid_still_applies_to_top_level_model_fields() -> None:
    value = str(uuid4())
    loaded = deserialize_object(
        {"__model__": f"{Inner.__module__}.Inner", "who": value}, canonical_uuid=True
    )
    assert str(loaded.who) == value and type(loaded.who) is not str


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"a":2}',
        "[1e400, NaN, -Infinity, 12345678901234567890123456789, 0.1, -0.0, 5e-324]",
        '["\\ud800", "\\u00e9\\ud83d\\ude00"]',
        '{"nested": {"list": [true, false, null, "s"]}}',
    ],
)
def test_codec_loads_matches_json_loads(text: str) -> None:
    assert repr(loads(text)) == repr(json.loads(text))
    assert repr(loads(text.encode())) == repr(json.loads(text.encode()))


def test_codec_loads_raises_json_errors() -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads('{"a": ')
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads('{"a": ')
    assert str(ours.value) == str(theirs.value)


class _Uid(UUID):
    pass


class _Colour(StrEnum):
    RED = "red"


@dataclasses.dataclass
class _Point:
    x: int
    at: UUID


class Tagged(SerializableBaseModel):
    when: datetime
    uid: UUID
    sub_uid: Any = None
    colour: _Colour = _Colour.RED
    point: Any = None
    blob: bytes = b""
    live: Any = None
    nested: list[Any] = []
    surrogate: str = ""

    @field_serializer("surrogate")
    def _shout(self, value: str) -> str:
        return value.upper()


def _tagged(surrogate: str = "fine") -> Tagged:
    proxy = ActorAddressProxy(_address())
    return Tagged(
        when=datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC),
        uid=uuid4(),
        sub_uid=_Uid(int=7),
        point=_Point(1, uuid4()),
        blob=b"\x00\xff",
        live=proxy,
        nested=[Inner(who=proxy, tags=["t"]), (1.5, None), {"k": uuid4()}, {uuid4()}, float("inf")],
        surrogate=surrogate,
    )


def test_the_json_dump_encodes_to_the_text_of_the_plain_dump() -> None:
    model = _tagged()
    plain = compact_dumps(serialize(model))
    assert to_json(serialize_for_json(model), inf_nan_mode="constants").decode() == plain
    assert to_json(serialize_base_model_for_json(model), inf_nan_mode="constants").decode() == plain
    assert serialize_for_json(model)["uid"] is model.uid  # left for the encoder to format
    assert json.loads(plain)["sub_uid"] == str(_Uid(int=7))


def test_the_json_dump_shares_a_snapshot_address_dict_that_serialize_copies() -> None:
    proxy = ActorAddressProxy(_address())
    assert serialize_for_json(proxy) is serialize_for_json(proxy)
    assert serialize(proxy) is not serialize(proxy)
    assert serialize(proxy) == serialize_for_json(proxy)


class _Moment(datetime):
    pass


def test_the_direct_dumpers_give_the_text_of_serialize_for_subclasses_too() -> None:
    # Exact types go straight to their dumper; their subclasses must still match serialize().
    stopped = ActorAddressStopped(_address("@Gone"))
    model = Tagged(
        when=_Moment(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        uid=uuid4(),
        live=stopped,
        nested=[datetime(2026, 5, 6, 7, 8, 9, 10), _Moment(2026, 1, 1), Inner(who=stopped)],
    )
    text = to_json(serialize_base_model_for_json(model), inf_nan_mode="constants").decode()
    assert text == compact_dumps(serialize(model))
    assert json.loads(text)["live"]["name"] == "@Gone"
    assert json.loads(text)["nested"][0] == "2026-05-06T07:08:09.000010"


def test_encode_event_gives_the_compact_text_of_model_dump_also_through_the_slow_path() -> None:
    for surrogate in ("plain", "lone \ud800 surrogate"):
        message = UserMessage(content=surrogate)
        event = PersistedEvent(team_id=uuid4(), sequence=3, event=message)
        data, text = encode_event_data(event)
        assert text == encode_event(event) == compact_dumps(event.model_dump())
        assert data["timestamp"] == event.timestamp.isoformat()
