"""The base :class:`Message` and the business messages every team understands."""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar
from uuid import UUID, SafeUUID

from pydantic import Field

from akgentic.core.actor_address import ActorAddress
from akgentic.core.utils.fastmodel import (
    SharedFieldsSet,
    new_instance,
    own_fields_set,
    set_dict,
    set_extra,
    set_fields_set,
    set_private,
)
from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = [
    "CancelMessage",
    "Message",
    "ResultMessage",
    "StopRecursively",
    "UserMessage",
    "date_time_factory",
    "fast_construct",
    "fast_factory",
    "new_id",
    "text_message_factory",
    "turn_telemetry_factory",
]

M = TypeVar("M", bound="Message")

_rng = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _rng.seed(os.urandom(32)))
_VERSION_MASK = ~((0xF000 << 64) | (0xC000 << 48))
_VERSION_BITS = (0x4000 << 64) | (0x8000 << 48)
_random_bits = _rng.getrandbits
_new_object = object.__new__
# UUID's slot descriptors: what object.__setattr__ ends up calling, minus the lookup.
_set_uuid_int = UUID.__dict__["int"].__set__
_set_uuid_safety = UUID.__dict__["is_safe"].__set__
_UNKNOWN_SAFETY = SafeUUID.unknown


def new_id() -> UUID:
    """A random (version 4) UUID.

    ``uuid.uuid4`` reads ``os.urandom`` on every call, a syscall that releases
    the GIL; on a busy actor system each id then costs a GIL round trip. A
    private generator seeded from ``os.urandom`` (re-seeded after fork) keeps
    ids unique without that cost. Ids are identifiers, not secrets.
    """
    value = _new_object(UUID)
    _set_uuid_int(value, (_random_bits(128) & _VERSION_MASK) | _VERSION_BITS)
    _set_uuid_safety(value, _UNKNOWN_SAFETY)
    return value


def date_time_factory() -> datetime:
    """Current time, timezone-aware UTC."""
    return datetime.now(UTC)


class Message(SerializableBaseModel):
    """Anything that flows between actors and into the event log.

    ``parent_id`` links a message to the message whose handling caused it;
    ``sender`` and ``team_id`` are stamped when the message is sent.
    """

    id: UUID = Field(default_factory=new_id)
    parent_id: UUID | None = None
    team_id: UUID | None = None
    timestamp: datetime | None = Field(default_factory=date_time_factory)
    sender: ActorAddress | None = None
    recipient: ActorAddress | None = None
    display_type: Literal["human", "ai", "other"] = "other"

    def init(
        self,
        sender: ActorAddress | None,
        team_id: UUID | str | None = None,
        current_message: Message | None = None,
    ) -> Self:
        """Stamp sender, team and causal parent; returns ``self``."""
        values: dict[str, Any] = self.__dict__
        values["parent_id"] = None if current_message is None else current_message.id
        values["team_id"] = (
            team_id if team_id is None or isinstance(team_id, UUID) else UUID(team_id)
        )
        values["sender"] = sender
        return self

    if not TYPE_CHECKING:  # (a typed __setattr__ would let mypy accept any attribute)

        def __setattr__(self, name: str, value: Any) -> None:
            # Telemetry built by the runtime shares one read-only fields set:
            # copy it before pydantic records the assignment in it.
            own_fields_set(self)
            super().__setattr__(name, value)


class UserMessage(Message):
    """Text typed by a human (or sent on their behalf)."""

    content: str
    display_type: Literal["human", "ai", "other"] = "human"


class ResultMessage(Message):
    """Text produced as an answer."""

    content: str
    display_type: Literal["human", "ai", "other"] = "ai"


class CancelMessage(Message):
    """Ask the recipient to abandon its current run; ignored by actors that cannot."""

    reason: str = ""


@dataclass
class StopRecursively:
    """Plain (non-Message) request to stop an actor and its children."""


_IMMUTABLE = (type(None), str, int, float, bool, tuple, frozenset)
_now = datetime.now
_construct_plans: dict[type, tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}


def _construct_plan(cls: type[Message]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    # (template, factories): the template holds every field that has a default, in
    # declaration order (factory-made fields as placeholders, so a constructed
    # message lists its fields in the same order as a validated one).
    plan = _construct_plans.get(cls)
    if plan is None:
        static: dict[str, Any] = {}
        factories: list[tuple[str, Any]] = []
        for name, info in cls.model_fields.items():
            if info.default_factory is not None:
                static[name] = None
                factory = info.default_factory
                if factory is date_time_factory:
                    factory = partial(_now, UTC)  # same value, no Python frame
                factories.append((name, factory))
            elif info.is_required():
                continue
            elif isinstance(info.default, _IMMUTABLE):
                static[name] = info.default
            else:
                static[name] = None
                factories.append((name, lambda d=info.default: copy.deepcopy(d)))
        plan = _construct_plans[cls] = (static, tuple(factories))
    return plan


def fast_construct(cls: type[M], fields: dict[str, Any]) -> M:
    """Build a message from trusted, already-typed values without validation.

    Used on the per-message telemetry path where every value comes from the
    runtime itself; anything user-supplied goes through normal validation.
    """
    plan = _construct_plans.get(cls)
    if plan is None:
        plan = _construct_plan(cls)
    values = plan[0].copy()
    for name, factory in plan[1]:
        values[name] = factory()
    values.update(fields)
    return _built(cls, values, _fields_set(cls, fields))


def _built(cls: type[M], data: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of ``cls`` whose fields are ``data``, without validation."""
    obj = new_instance(cls)
    set_dict(obj, data)
    set_fields_set(obj, fields_set)
    set_extra(obj, None)
    set_private(obj, None)
    return obj


def fast_factory(cls: type[M], names: tuple[str, ...]) -> Callable[..., M]:
    """A positional constructor: ``fast_factory(cls, names)(*values)``.

    The result equals ``fast_construct(cls, dict(zip(names, values)))`` (same
    values, same ``__dict__`` order, same fields set); the class's plan and
    shared fields set are looked up once, here, instead of on every message.
    """
    static, factories = _construct_plan(cls)
    fields_set = _fields_set(cls, dict.fromkeys(names))
    # Field names the template lacks (required ones) come after the template's, in
    # the order of ``names``, exactly as ``dict.update`` places them.
    order = tuple(names)
    if _standard_stamps(cls, factories):

        def build_stamped(*values: Any) -> M:
            data = static.copy()
            data["id"] = new_id()
            data["timestamp"] = _now(UTC)  # date_time_factory() without its frame
            data.update(zip(order, values, strict=True))
            return _built(cls, data, fields_set)

        return build_stamped

    def build(*values: Any) -> M:
        data = static.copy()
        for name, factory in factories:
            data[name] = factory()
        data.update(zip(order, values, strict=True))
        return _built(cls, data, fields_set)

    return build


def _standard_stamps(cls: type[Message], factories: tuple[tuple[str, Any], ...]) -> bool:
    # True when the only factory-made fields are Message's own id and timestamp.
    fields = cls.model_fields
    return (
        [name for name, _ in factories] == ["id", "timestamp"]
        and fields["id"].default_factory is new_id
        and fields["timestamp"].default_factory is date_time_factory
    )


def text_message_factory(cls: type[M]) -> Callable[[str], M] | None:
    """``cls(content=text)`` for an exact ``str`` without pydantic's validation, if safe.

    For the message a team wraps a plain string in (``TeamRuntime.send``):
    validating ``{"content": text}`` only runs the default factories and the
    base model's ``before`` validator, which returns such input unchanged. The
    factory exists only for classes where that holds: ``content: str`` is the
    one required field, without constraints, alias or config transforming
    strings, and the class adds no validator, ``__init__`` or post-init hook.
    Anything else (or a ``str`` subclass) must take ``cls(content=...)``.
    """
    if not _plain_text_class(cls):
        return None
    static, factories = _construct_plan(cls)
    # Every field in declaration order, ``content`` included, as validation lists them.
    template = {name: static.get(name) for name in cls.model_fields}
    fields_set = _fields_set(cls, {"content": None})

    stamped = _standard_stamps(cls, factories)

    def make(text: str) -> M:
        data = template.copy()
        if stamped:
            data["id"] = new_id()
            data["timestamp"] = _now(UTC)  # date_time_factory() without its frame
        else:
            for name, factory in factories:
                data[name] = factory()
        data["content"] = text
        return _built(cls, data, fields_set)

    return make


_TEXT_CONFIG_KEYS = (
    "str_strip_whitespace",
    "str_to_lower",
    "str_to_upper",
    "str_min_length",
    "str_max_length",
    "strict",
    "validate_default",
    "coerce_numbers_to_str",
    "regex_engine",
)


def _plain_text_class(cls: type[Message]) -> bool:
    from pydantic import BaseModel

    fields = cls.model_fields
    content = fields.get("content")
    if content is None or [n for n, f in fields.items() if f.is_required()] != ["content"]:
        return False
    if content.annotation is not str or content.metadata or content.alias is not None:
        return False
    if content.validation_alias is not None:
        return False
    config = cls.model_config
    if any(config.get(key) for key in _TEXT_CONFIG_KEYS) or config.get("extra") == "allow":
        return False
    if config.get("alias_generator") is not None or config.get("validate_by_name"):
        return False
    decorators = cls.__pydantic_decorators__
    if decorators.field_validators or decorators.validators or decorators.root_validators:
        return False
    if set(decorators.model_validators) != {"_deserialize_input"}:
        return False
    # Bound to each class, so compared by the function they bind (an override differs).
    base = SerializableBaseModel.__pydantic_decorators__.model_validators["_deserialize_input"]
    own = decorators.model_validators["_deserialize_input"]
    if getattr(own.func, "__func__", own.func) is not getattr(base.func, "__func__", base.func):
        return False
    init: object = cls.__init__
    if init is not BaseModel.__init__ or cls.__pydantic_post_init__ is not None:
        return False
    return not cls.__private_attributes__


#: (class, field names) -> the read-only fields set its fast-built messages share.
_shared_fields_sets: dict[tuple[type, tuple[str, ...]], set[str]] = {}


def _fields_set(cls: type[Message], fields: dict[str, Any]) -> set[str]:
    # A team keeps every message in its history, so a set per message is one more
    # object each full garbage collection walks; the runtime builds the same few
    # field combinations over and over. Only a class whose assignments copy a
    # shared set first (Message.__setattr__) may hold one.
    key = (cls, tuple(fields))
    shared = _shared_fields_sets.get(key)
    if shared is None:
        if cls.__setattr__ is not Message.__setattr__ or len(_shared_fields_sets) >= 256:
            return set(fields)
        shared = _shared_fields_sets[key] = SharedFieldsSet(fields)
    return shared


_TURN_FIELDS = frozenset({"message_id", "sender", "team_id", "parent_id"})
_SHARED_TURN_FIELDS = SharedFieldsSet(_TURN_FIELDS)
# The base Message fields plus ``message_id``, in declaration order.
_TURN_LAYOUT = [
    "id",
    "parent_id",
    "team_id",
    "timestamp",
    "sender",
    "recipient",
    "display_type",
    "message_id",
]


def turn_telemetry_factory(
    cls: type[M],
) -> Callable[[UUID, ActorAddress | None, UUID | None, UUID | None], M]:
    """A fast constructor ``(message_id, sender, team_id, parent_id) -> cls``.

    For the per-turn telemetry classes (``ReceivedMessage``, ``ProcessedMessage``,
    ``HandledMessage``): the result equals ``fast_construct(cls, {...})`` with
    those four fields, minus the generic bookkeeping, and its fields set is
    one shared read-only set (copied on the first assignment). Classes whose
    fields or defaults are not the base ``Message`` ones get the generic path.
    """
    static, factories = _construct_plan(cls)
    generic = (
        [name for name, _ in factories] != ["id", "timestamp"]
        or list(cls.model_fields) != _TURN_LAYOUT
        or list(static) != _TURN_LAYOUT[:-1]
        or static["recipient"] is not None
        or cls.model_fields["id"].default_factory is not new_id
        or cls.model_fields["timestamp"].default_factory is not date_time_factory
        or cls.__setattr__ is not Message.__setattr__
    )
    if generic:

        def build_generic(
            message_id: UUID,
            sender: ActorAddress | None,
            team_id: UUID | None,
            parent_id: UUID | None,
        ) -> M:
            return fast_construct(
                cls,
                {
                    "message_id": message_id,
                    "sender": sender,
                    "team_id": team_id,
                    "parent_id": parent_id,
                },
            )

        return build_generic

    display_type = static["display_type"]
    shared_fields = _SHARED_TURN_FIELDS

    def build(
        message_id: UUID,
        sender: ActorAddress | None,
        team_id: UUID | None,
        parent_id: UUID | None,
    ) -> M:
        # new_id(), inlined: one frame less per message.
        uid = _new_object(UUID)
        _set_uuid_int(uid, (_random_bits(128) & _VERSION_MASK) | _VERSION_BITS)
        _set_uuid_safety(uid, _UNKNOWN_SAFETY)
        obj = new_instance(cls)
        set_dict(
            obj,
            {
                "id": uid,
                "parent_id": parent_id,
                "team_id": team_id,
                "timestamp": _now(UTC),
                "sender": sender,
                "recipient": None,
                "display_type": display_type,
                "message_id": message_id,
            },
        )
        set_fields_set(obj, shared_fields)
        set_extra(obj, None)
        set_private(obj, None)
        return obj

    return build
