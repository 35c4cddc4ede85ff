"""Swap addresses inside models: live -> snapshot for subscribers, snapshot -> live on restore.

Both functions return the *same object* when nothing needed replacing (callers
rely on that identity as a cheap "unchanged" test) and otherwise a shallow copy;
the input is never mutated.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar, cast
from uuid import UUID

from pydantic import BaseModel

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.utils.fastmodel import (
    SharedFieldsSet,
    copy_fields_set,
    new_instance,
    set_dict,
    set_extra,
    set_fields_set,
    set_private,
)

__all__ = [
    "hydrate_addresses",
    "map_addresses",
    "sender_snapshot",
    "snapshot_addresses",
    "snapshot_model",
    "snapshot_sender_only",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


_SKIP, _ADDRESS, _MODEL, _LIST, _TUPLE, _DICT, _SET, _DATACLASS = range(8)
_kinds: dict[type, int] = {
    str: _SKIP,
    int: _SKIP,
    float: _SKIP,
    bool: _SKIP,
    type(None): _SKIP,
    bytes: _SKIP,
    UUID: _SKIP,
    datetime: _SKIP,
    list: _LIST,
    tuple: _TUPLE,
    dict: _DICT,
    set: _SET,
    frozenset: _SET,
}


def _kind(t: type) -> int:
    # One isinstance walk per type, then a dict hit: this runs per message.
    kind = _kinds.get(t)
    if kind is None:
        if issubclass(t, ActorAddress):
            kind = _ADDRESS
        elif issubclass(t, BaseModel):
            kind = _MODEL
        elif dataclasses.is_dataclass(t):
            kind = _DATACLASS
        else:
            kind = _SKIP
        _kinds[t] = kind
    return kind


_SCALAR_ANNOTATIONS: frozenset[Any] = frozenset(
    {str, int, float, bool, bytes, UUID, datetime, type(None)}
)
_field_plans: dict[type, tuple[str, ...]] = {}
_SENDER_RECIPIENT = ("sender", "recipient")
#: The address-holding fields of a send report: who sent what to whom.
_SENT = ("sender", "recipient", "message")


def _cannot_hold_address(annotation: Any) -> bool:
    if annotation in _SCALAR_ANNOTATIONS:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Union or origin is types.UnionType:
        return all(_cannot_hold_address(arg) for arg in typing.get_args(annotation))
    return False


def _address_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    # Fields declared as plain scalars can never hold an address: skip them for good.
    plan = _field_plans.get(cls)
    if plan is None:
        plan = _field_plans[cls] = tuple(
            name
            for name, info in cls.model_fields.items()
            if not _cannot_hold_address(info.annotation)
        )
    return plan


def map_addresses(value: T, fn: Callable[[ActorAddress], ActorAddress]) -> T:
    """Apply ``fn`` to every address reachable from ``value``; copy only what changed."""
    return _map(value, fn)  # type: ignore[no-any-return]


def _copy_model(model: BaseModel, changes: dict[str, Any]) -> BaseModel:
    cls = type(model)
    copy = new_instance(cls)
    set_dict(copy, {**model.__dict__, **changes})
    set_fields_set(copy, copy_fields_set(model.__pydantic_fields_set__))
    set_extra(copy, model.__pydantic_extra__)
    private = model.__pydantic_private__
    set_private(copy, None if private is None else dict(private))
    return copy


def _map(value: Any, fn: Callable[[ActorAddress], ActorAddress]) -> Any:
    kind = _kinds.get(type(value))
    if kind is None:
        kind = _kind(type(value))
    if kind == _SKIP:
        return value
    if kind == _ADDRESS:
        return fn(value)
    if kind == _MODEL:
        changes: dict[str, Any] | None = None
        values = value.__dict__
        for name in _address_fields(type(value)):
            item = values.get(name)
            if _kinds.get(type(item)) == _SKIP:
                continue
            new = _map(item, fn)
            if new is not item:
                if changes is None:
                    changes = {}
                changes[name] = new
        return value if changes is None else _copy_model(value, changes)
    if kind in (_LIST, _TUPLE):
        items = [_map(item, fn) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if kind == _LIST else tuple(items)
    if kind == _DICT:
        new_items = {k: _map(v, fn) for k, v in value.items()}
        if all(new_items[k] is v for k, v in value.items()):
            return value
        return new_items
    if kind == _SET:
        mapped = [(item, _map(item, fn)) for item in value]
        if all(a is b for a, b in mapped):
            return value
        return type(value)(b for _, b in mapped)
    field_changes = {}
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        new = _map(item, fn)
        if new is not item:
            field_changes[f.name] = new
    if not field_changes:
        return value
    return dataclasses.replace(value, **field_changes)


def _to_snapshot(address: ActorAddress) -> ActorAddress:
    return address._snapshot()


def snapshot_addresses(model: T) -> T:
    """Replace every live address in ``model`` by its read-only snapshot."""
    if _kinds.get(type(model)) == _MODEL:
        return cast(T, snapshot_model(cast(BaseModel, model)))
    return _map(model, _to_snapshot)  # type: ignore[no-any-return]


def snapshot_model(model: M) -> M:
    """:func:`snapshot_addresses` for a pydantic model: the per-message fan-out path.

    Only fields whose annotation can hold an address are looked at; an address
    found directly in a field is swapped for its (cached) snapshot without the
    generic walk. Telemetry whose only address is its sender (the common case)
    takes a shortcut.
    """
    cls = type(model)
    names = _field_plans.get(cls)
    if names is None:
        _kind(cls)
        names = _address_fields(cls)
    values = model.__dict__
    merged: dict[str, Any] | None = None
    if names == _SENDER_RECIPIENT and values.get("recipient") is None:
        sender = values.get("sender")
        if sender is None:
            return model
        if _kinds.get(type(sender)) == _ADDRESS:
            snapshot = sender._snapshot()
            if snapshot is sender:
                return model
            merged = values.copy()
            merged["sender"] = snapshot
    if merged is None:
        changes: dict[str, Any] | None = None
        for name in names:
            item = values.get(name)
            if item is None:
                continue
            kind = _kinds.get(type(item))
            if kind is None:
                kind = _kind(type(item))
            if kind == _SKIP:
                continue
            new = item._snapshot() if kind == _ADDRESS else _map(item, _to_snapshot)
            if new is not item:
                if changes is None:
                    changes = {name: new}
                else:
                    changes[name] = new
        if changes is None:
            return model
        merged = values.copy()
        merged.update(changes)
    copy = new_instance(cls)
    set_dict(copy, merged)
    set_fields_set(copy, copy_fields_set(model.__pydantic_fields_set__))
    set_extra(copy, model.__pydantic_extra__)
    private = model.__pydantic_private__
    set_private(copy, None if private is None else dict(private))
    return copy


def sender_snapshot(sender: Any) -> Any:
    """What :func:`snapshot_model` puts in place of ``sender``: for :func:`snapshot_sender_only`."""
    kind = _kind(type(sender))
    if kind == _ADDRESS:
        return sender._snapshot()
    return sender if kind == _SKIP else _map(sender, _to_snapshot)


def _rebuilt(model: M, merged: dict[str, Any]) -> M:
    # A shallow copy of ``model`` whose field values are ``merged``
    # (copy_fields_set inlined: this runs for every message a team records).
    copy = new_instance(type(model))
    set_dict(copy, merged)
    fields_set = model.__pydantic_fields_set__
    set_fields_set(copy, fields_set if type(fields_set) is SharedFieldsSet else set(fields_set))
    set_extra(copy, model.__pydantic_extra__)
    private = model.__pydantic_private__
    set_private(copy, None if private is None else dict(private))
    return copy


def _with_sender(model: M, sender: Any, snapshot: Any) -> M | None:
    # ``model`` with ``sender`` replaced by ``snapshot`` when that is its only
    # address (its class holds addresses only in sender/recipient, recipient
    # unset); None when the generic walk is needed.
    values = model.__dict__
    cls = type(model)
    plan = _field_plans.get(cls)
    if plan is None:
        if _kind(cls) != _MODEL:
            return None
        plan = _address_fields(cls)
    if plan != _SENDER_RECIPIENT or values.get("recipient") is not None:
        return None
    if values.get("sender") is not sender:
        return None
    merged = values.copy()
    merged["sender"] = snapshot
    return _rebuilt(model, merged)


def snapshot_sender_only(model: M, snapshot: Any) -> M:
    """:func:`snapshot_model` for a model whose sender is known to snapshot to ``snapshot``.

    ``snapshot`` must be ``sender_snapshot(model.sender)``. The shortcut of
    per-turn telemetry: a model with no address-holding field besides
    ``sender`` (and an unset ``recipient``), or a send report
    (``sender``, ``recipient`` and the ``message`` sent, itself a model of the
    first shape from the same sender). Either way the same result as
    :func:`snapshot_model`, computed without the generic walk; any other
    model takes :func:`snapshot_model`.
    """
    values = model.__dict__
    plan = _field_plans.get(type(model))
    sender = values.get("sender")
    if plan == _SENDER_RECIPIENT:
        if values.get("recipient") is not None:
            return snapshot_model(model)
        if snapshot is sender:
            return model
        merged = values.copy()
        merged["sender"] = snapshot
        return _rebuilt(model, merged)
    if plan == _SENT and snapshot is not sender:
        recipient: Any = values.get("recipient")
        inner = values.get("message")
        if _kinds.get(type(recipient)) == _ADDRESS and inner is not None:
            inner_snapshot = _with_sender(inner, sender, snapshot)
            if inner_snapshot is not None:
                merged = values.copy()
                merged["sender"] = snapshot
                merged["recipient"] = recipient._snapshot()
                merged["message"] = inner_snapshot
                return _rebuilt(model, merged)
    return snapshot_model(model)


def hydrate_addresses(model: T, resolver: Callable[[ActorAddress], ActorAddress]) -> T:
    """Replace every snapshot address in ``model`` by ``resolver(snapshot)``.

    Exceptions raised by ``resolver`` propagate; ``model`` is left untouched.
    """

    def fn(address: ActorAddress) -> ActorAddress:
        return resolver(address) if isinstance(address, ActorAddressProxy) else address

    return _map(model, fn)  # type: ignore[no-any-return]
