"""Serialization markers, tolerant loading and address snapshot/hydrate."""

from __future__ import annotations

import dataclasses
import logging
import sys
import types
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import pydantic
import pytest

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy, ActorAddressStopped
from akgentic.core.messages import SentMessage, UserMessage
from akgentic.core.utils import (
    SerializableBaseModel,
    UnresolvableClassError,
    deserialize_object,
    hydrate_addresses,
    import_class,
    is_uuid_canonical,
    serialize,
    snapshot_addresses,
)


@dataclasses.dataclass(frozen=True)
class Payload:
    name: str
    count: int = 0


@pydantic.dataclasses.dataclass
class PydanticPayload:
    when: datetime
    size: int


class Holder(SerializableBaseModel):
    items: list[Any] = []
    mapping: dict[str, Any] = {}
    blob: bytes = b""
    kind: type | None = None
    address: ActorAddress | None = None


def _address_dict(name: str = "@A") -> dict[str, Any]:
    return {
        "__actor_address__": True,
        "__actor_type__": "x.Y",
        "agent_id": str(uuid4()),
        "name": name,
        "role": "R",
        "team_id": str(uuid4()),
        "squad_id": "",
        "is_user_proxy": False,
    }


def test_scalars_uuid_datetime_set_and_tuple_serialize_to_json_types() -> None:
    uid = uuid4()
    now = datetime.now(UTC)
    assert serialize(uid) == str(uid)
    assert serialize(now) == now.isoformat()
    assert sorted(serialize({3, 1, 2})) == [1, 2, 3]
    assert serialize((1, "a")) == [1, "a"]
    assert serialize(None) is None
    assert serialize({"k": uid}) == {"k": str(uid)}


def test_types_are_tagged_and_imported_back() -> None:
    tagged = serialize(UserMessage)
    assert tagged == {"__type__": "akgentic.core.messages.message.UserMessage"}
    assert deserialize_object(tagged) is UserMessage


@pytest.mark.parametrize("blob", [b"", b"\x00\xffdata", bytes(range(256))])
def test_bytes_round_trip_including_empty_and_nested(blob: bytes) -> None:
    assert deserialize_object(serialize(blob)) == blob
    holder = Holder(blob=blob, mapping={"inner": [blob]})
    restored = Holder.model_validate(holder.model_dump())
    assert restored.blob == blob
    assert restored.mapping["inner"] == [blob]


def test_dataclass_instances_carry_their_class_path() -> None:
    dumped = serialize(Payload("x", 2))
    assert dumped["__model__"].endswith(".Payload")
    assert deserialize_object(dumped) == Payload("x", 2)


def test_pydantic_dataclass_fields_are_coerced_on_load() -> None:
    now = datetime.now(UTC)
    dumped = serialize(PydanticPayload(when=now, size=3))
    restored = deserialize_object(dumped)
    assert restored.when == now and isinstance(restored.when, datetime)


def test_address_dicts_become_proxies_without_a_context() -> None:
    restored = deserialize_object(_address_dict("@B"))
    assert isinstance(restored, ActorAddressProxy)
    assert restored.name == "@B"


def test_address_dicts_go_through_the_context_resolver() -> None:
    seen: list[Any] = []

    class Context:
        def resolve_address(self, data: Any) -> ActorAddress:
            seen.append(data)
            return ActorAddressStopped(data)

    restored = deserialize_object({"a": _address_dict()}, context=Context())
    assert isinstance(restored["a"], ActorAddressStopped) and len(seen) == 1


def test_a_context_without_resolver_falls_back_to_proxies() -> None:
    assert isinstance(deserialize_object(_address_dict(), context=object()), ActorAddressProxy)


def test_canonical_uuid_strings_convert_only_when_asked() -> None:
    text = str(uuid4())
    assert deserialize_object(text) == text
    assert deserialize_object(text, canonical_uuid=True) == UUID(text)
    assert is_uuid_canonical(text) and not is_uuid_canonical(text.upper())


def test_a_stale_class_path_raises_unresolvable_class_error() -> None:
    with pytest.raises(UnresolvableClassError):
        deserialize_object({"__model__": "akgentic.gone.module.Thing", "x": 1})
    with pytest.raises(UnresolvableClassError):
        import_class("akgentic.core.messages.message.NoSuchClass")


def test_a_stale_element_inside_a_list_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = UserMessage(content="kept").model_dump()
    stale = {"__model__": "akgentic.gone.module.Thing"}
    with caplog.at_level(logging.WARNING):
        restored = deserialize_object([good, stale, good])
    assert [type(m) for m in restored] == [UserMessage, UserMessage]
    assert "unresolvable" in caplog.text


def test_a_module_that_fails_while_importing_is_reraised_as_is() -> None:
    name = "akgentic_broken_test_module"
    spec_module = types.ModuleType(name)
    sys.modules.pop(name, None)
    finder_calls: list[str] = []

    class Finder:
        def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
            if fullname != name:
                return None
            finder_calls.append(fullname)
            import importlib.util

            class Loader:
                def create_module(self, spec: Any) -> Any:
                    return spec_module

                def exec_module(self, module: Any) -> None:
                    raise RuntimeError("boom at import")

            return importlib.util.spec_from_loader(fullname, Loader())  # type: ignore[arg-type]

    finder = Finder()
    sys.meta_path.insert(0, finder)
    try:
        with pytest.raises(RuntimeError, match="boom at import"):
            import_class(f"{name}.Thing")
    finally:
        sys.meta_path.remove(finder)
        sys.modules.pop(name, None)
    assert finder_calls


def test_construction_failure_is_reported_as_a_value_error() -> None:
    bad = {"__model__": "akgentic.core.messages.message.UserMessage", "content": {"no": 1}}
    with pytest.raises(ValueError, match="Error deserializing model"):
        deserialize_object(bad)


def test_subclass_payload_validated_as_the_base_class_yields_the_subclass() -> None:
    from akgentic.core.messages import Message

    restored = Message.model_validate(UserMessage(content="x").model_dump())
    assert type(restored) is UserMessage


def test_fields_marked_exclude_are_not_dumped() -> None:
    class WithSecret(SerializableBaseModel):
        visible: int = 1
        secret: int = pydantic.Field(default=2, exclude=True)

    assert "secret" not in WithSecret().model_dump()


def test_field_serializers_are_applied() -> None:
    class Sorted(SerializableBaseModel):
        tags: set[str] = set()

        @pydantic.field_serializer("tags")
        def _sorted(self, value: set[str]) -> list[str]:
            return sorted(value)

    assert Sorted(tags={"b", "a", "c"}).model_dump()["tags"] == ["a", "b", "c"]


# ------------------------------------------------------------ snapshot / hydrate


def test_snapshot_returns_the_same_object_when_there_is_no_live_address() -> None:
    msg = UserMessage(content="x")
    assert snapshot_addresses(msg) is msg
    holder = Holder(items=[1, "a", {"k": (1, 2)}])
    assert snapshot_addresses(holder) is holder


def test_hydrate_replaces_proxies_everywhere_and_copies_only_what_changed() -> None:
    proxy = ActorAddressProxy(_address_dict("@P"))
    replacement = ActorAddressStopped(_address_dict("@Live"))
    inner = UserMessage(content="x", sender=proxy)
    holder = Holder(
        items=[proxy, (proxy,), {proxy}],
        mapping={"a": proxy, "msg": inner},
        address=proxy,
    )
    hydrated = hydrate_addresses(holder, lambda a: replacement)
    assert hydrated is not holder
    assert hydrated.address is replacement
    assert hydrated.items[0] is replacement
    assert hydrated.items[1] == (replacement,)
    assert hydrated.items[2] == {replacement}
    assert hydrated.mapping["a"] is replacement
    assert hydrated.mapping["msg"].sender is replacement
    # the input is untouched
    assert holder.address is proxy and inner.sender is proxy


def test_resolver_errors_propagate_and_leave_the_input_untouched() -> None:
    proxy = ActorAddressProxy(_address_dict())
    msg = SentMessage(message=UserMessage(content="x", sender=proxy), recipient=proxy)

    def fail(_: ActorAddress) -> ActorAddress:
        raise LookupError("unknown member")

    with pytest.raises(LookupError):
        hydrate_addresses(msg, fail)
    assert msg.recipient is proxy and msg.message.sender is proxy
