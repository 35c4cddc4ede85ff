"""Serialization with persisted type markers.

Every :class:`SerializableBaseModel` dumps to a plain dict carrying
``"__model__": "<module>.<Class>"``; classes referenced as values dump as
``{"__type__": path}``, bytes as ``{"__bytes__": base64}`` and actor addresses
as their :class:`~akgentic.core.actor_address.ActorAddressDict`. Loading walks
the same markers back. Those dotted paths are written into stored events, so a
persisted class must never move without leaving an importable alias behind.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import inspect
import json
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any, Protocol, Self, runtime_checkable
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_serializer
from pydantic import model_validator as _model_validator
from pydantic_core import to_jsonable_python

from akgentic.core.actor_address import ActorAddress, ActorAddressDict, ActorAddressProxy

__all__ = [
    "ADDRESS_KEY",
    "BYTES_KEY",
    "MODEL_KEY",
    "TYPE_KEY",
    "DeserializeContext",
    "SerializableBaseModel",
    "UnresolvableClassError",
    "add_import_fallback",
    "class_path",
    "deserialize_object",
    "get_field_serializers_map",
    "import_class",
    "is_uuid_canonical",
    "resolving_moved_classes",
    "serialize",
    "serialize_base_model",
    "serialize_base_model_for_json",
    "serialize_for_json",
    "serialize_type",
    "shared_addresses",
]

logger = logging.getLogger(__name__)

MODEL_KEY = "__model__"
TYPE_KEY = "__type__"
BYTES_KEY = "__bytes__"
ADDRESS_KEY = "__actor_address__"

_ATOMIC: frozenset[type] = frozenset({str, int, float, bool, type(None)})
#: What deserialize_object returns unchanged (str only without canonical_uuid).
_PASS_THROUGH: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class UnresolvableClassError(ValueError):
    """A persisted type marker names a class path that no longer exists."""


@runtime_checkable
class DeserializeContext(Protocol):
    """Turns serialized addresses back into usable ones while loading."""

    def resolve_address(self, address: ActorAddressDict) -> ActorAddress:
        """Return the address to use for ``address`` (live if possible)."""
        ...


_class_paths: dict[type, str] = {}
_imported: dict[str, Any] = {}
_fallbacks: list[Callable[[str], Any]] = []


def class_path(cls: type) -> str:
    """Dotted ``module.Name`` path of ``cls`` (cached)."""
    path = _class_paths.get(cls)
    if path is None:
        path = _class_paths[cls] = f"{cls.__module__}.{cls.__name__}"
    return path


serialize_type = class_path


def import_class(path: str) -> Any:
    """Import ``pkg.module.Name``.

    Raises :class:`UnresolvableClassError` when the module or the attribute does
    not exist; a module that exists but fails while importing re-raises as is.
    """
    found = _imported.get(path)
    if found is not None:
        return found
    module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise UnresolvableClassError(f"'{path}' is not a dotted 'module.Class' path")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            moved = _moved(path)
            if moved is not None:
                return moved
            raise UnresolvableClassError(f"cannot resolve '{path}': no module '{missing}'") from exc
        raise
    try:
        found = getattr(module, attr)
    except AttributeError as exc:
        moved = _moved(path)
        if moved is not None:
            return moved
        raise UnresolvableClassError(f"cannot resolve '{path}': {exc}") from exc
    _imported[path] = found
    return found


def add_import_fallback(fallback: Callable[[str], Any]) -> None:
    """Let ``fallback(path)`` answer for class paths that no longer import.

    :func:`import_class` asks the fallbacks, in the order they were added, only
    once the import itself has failed, and uses the first answer that is not
    None. Answers are not cached: what a fallback knows may change (the team
    layer answers with the former paths plugins declare, ``MessageTypeSpec.aliases``).
    """
    if fallback not in _fallbacks:
        _fallbacks.append(fallback)


_moved_resolver: ContextVar[Callable[[str], Any] | None] = ContextVar(
    "akgentic_moved_class_resolver", default=None
)


@contextmanager
def resolving_moved_classes(resolver: Callable[[str], Any] | None) -> Iterator[None]:
    """Let ``resolver(path)`` answer for class paths that no longer import, inside the block.

    The explicit form of :func:`add_import_fallback`: a decoder that knows where
    classes moved (the team codec, through the message types a plugin registry
    declares) hands its resolver in for the duration of one decode, so nothing is
    registered process-wide. It is asked before the global fallbacks; ``None``
    leaves only those. Scoped per thread (a context variable).
    """
    token = _moved_resolver.set(resolver)
    try:
        yield
    finally:
        _moved_resolver.reset(token)


def _moved(path: str) -> Any:
    resolver = _moved_resolver.get()
    if resolver is not None:
        found = resolver(path)
        if found is not None:
            return found
    for fallback in _fallbacks:
        found = fallback(path)
        if found is not None:
            return found
    return None


def is_uuid_canonical(value: str) -> bool:
    """True for the lowercase hyphenated 36-character UUID form."""
    return len(value) == 36 and _UUID_RE.match(value) is not None


# --------------------------------------------------------------------- dump


def serialize(value: Any) -> Any:
    """Turn ``value`` into JSON-compatible data, tagging types as described above."""
    t = type(value)
    if t in _ATOMIC:
        return value
    dump = _dumpers.get(t)
    if dump is None:
        dump = _dumpers[t] = _dumper_for(t)
    return dump(value)


#: id(uuid) -> (uuid, its text), for the UUIDs a stream repeats (a team's id is in
#: every event). Holding the UUID keeps its id from being reused while cached.
_uuid_texts: dict[int, tuple[UUID, str]] = {}


def _dump_uuid(value: UUID) -> str:
    # UUID.__str__ is Python code; a team id formatted once per event adds up.
    key = id(value)
    hit = _uuid_texts.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    text = str(value)
    if len(_uuid_texts) >= 256:
        _uuid_texts.clear()  # message ids never repeat: start again rather than grow
    _uuid_texts[key] = (value, text)
    return text


def _identity(value: Any) -> Any:
    return value


def _dump_address(value: ActorAddress) -> Any:
    return value.serialize()


def _dump_datetime(value: datetime) -> str:
    return value.isoformat()


def _dump_sequence(value: Any) -> list[Any]:
    return [serialize(v) for v in value]


def _dump_mapping(value: Any) -> dict[Any, Any]:
    return {k: serialize(v) for k, v in value.items()}


def _dump_foreign_model(value: BaseModel) -> Any:
    return serialize(value.model_dump())


def _dump_bytes(value: bytes | bytearray) -> dict[str, str]:
    return {BYTES_KEY: base64.b64encode(bytes(value)).decode("ascii")}


def _dump_type(value: type) -> dict[str, str]:
    return {TYPE_KEY: class_path(value)}


def _dump_dataclass(value: Any) -> dict[str, Any]:
    out = {f.name: serialize(getattr(value, f.name)) for f in dataclasses.fields(value)}
    out[MODEL_KEY] = class_path(type(value))
    return out


def _dumper_for(t: type) -> Callable[[Any], Any]:
    """How values of exactly type ``t`` are dumped (decided once per type).

    The order of the checks is the contract: an address before a model, a
    model before a container, a str/int/float subclass (an enum) as itself.
    """
    if t is UUID:
        return _dump_uuid
    if issubclass(t, UUID):
        return str
    if issubclass(t, ActorAddress):
        return _dump_address
    if issubclass(t, datetime):
        return _dump_datetime
    if issubclass(t, BaseModel):
        if issubclass(t, SerializableBaseModel):
            return serialize_base_model
        return _dump_foreign_model
    if t is list or t is tuple or t is set or t is frozenset:
        return _dump_sequence
    if t is dict:
        return _dump_mapping
    if issubclass(t, str | int | float):
        return _identity
    if issubclass(t, bytes | bytearray):
        return _dump_bytes
    if issubclass(t, type):
        return _dump_type
    if issubclass(t, list | tuple | set | frozenset):
        return _dump_sequence
    if issubclass(t, dict):
        return _dump_mapping
    if dataclasses.is_dataclass(t):
        return _dump_dataclass
    return to_jsonable_python


#: Concrete type -> its dumper; every decision of :func:`_dumper_for` depends on the type only.
_dumpers: dict[type, Callable[[Any], Any]] = {}


_FieldPlan = tuple[tuple[str, Callable[[Any, Any], Any] | None], ...]
_plans: dict[type, _FieldPlan] = {}


def get_field_serializers_map(cls: type[BaseModel]) -> dict[str, Callable[[Any, Any], Any]]:
    """Map field name -> ``fn(model, value)`` for every ``@field_serializer`` of ``cls``."""
    out: dict[str, Callable[[Any, Any], Any]] = {}
    for dec in cls.__pydantic_decorators__.field_serializers.values():
        func: Any = dec.func
        n_params = len(inspect.signature(func).parameters)
        wrap = dec.info.mode == "wrap"

        def call(
            model: Any, value: Any, _f: Any = func, _n: int = n_params, _w: bool = wrap
        ) -> Any:
            args: list[Any] = [model, value]
            if _w:
                args.append(lambda v: v)
            while len(args) < _n:
                args.append(None)
            return _f(*args[:_n])

        for name in dec.info.fields:
            out[name] = call
    return out


def _plan(cls: type[BaseModel]) -> _FieldPlan:
    plan = _plans.get(cls)
    if plan is None:
        custom = get_field_serializers_map(cls)
        plan = tuple(
            (name, custom.get(name)) for name, info in cls.model_fields.items() if not info.exclude
        )
        _plans[cls] = plan
    return plan


def serialize_base_model(model: BaseModel) -> dict[str, Any]:
    """Dump the declared fields of ``model`` through :func:`serialize`, plus ``__model__``."""
    values = model.__dict__
    out: dict[str, Any] = {}
    for name, fn in _plan(type(model)):
        value = values.get(name)
        if fn is not None:
            value = fn(model, value)
        out[name] = serialize(value)
    out[MODEL_KEY] = class_path(type(model))
    return out


# ------------------------------------------------------------ dump for JSON


def serialize_for_json(value: Any) -> Any:
    """:func:`serialize` for data handed straight to pydantic-core's ``to_json``.

    Encoded, the result is the same JSON text as ``serialize(value)``, made
    with less Python work: an exact :class:`~uuid.UUID` is left for the encoder
    to format (it writes the same hyphenated text) and a snapshot address's
    dict is shared rather than copied. The result is therefore only good for
    encoding at once: never keep or modify it.
    """
    t = type(value)
    if t in _ATOMIC or t is UUID:
        return value
    dump = _json_dumpers.get(t)
    if dump is None:
        dump = _json_dumpers[t] = _json_dumper_for(t)
    return dump(value)


def _json_dumper_for(t: type) -> Callable[[Any], Any]:
    """The dumper of :func:`serialize_for_json` for values of exactly type ``t``.

    Where it can, the answer is the function doing the work itself (a
    snapshot's ``_shared_dump``, a model class's compiled dumper,
    ``datetime.isoformat``) rather than a wrapper calling it: the compiled
    model dumpers call it once per field value of every stored event.
    """
    if issubclass(t, ActorAddressProxy):
        shared: Callable[[Any], Any] = t._shared_dump
        return shared
    if issubclass(t, SerializableBaseModel):
        return _json_model_dumper(t)
    if t is datetime:
        return datetime.isoformat
    if t is list or t is tuple or t is set or t is frozenset:
        return _json_sequence
    if t is dict:
        return _json_mapping
    return _dumper_for(t)  # everything else: the same as serialize()


def _json_sequence(value: Any) -> list[Any]:
    return [serialize_for_json(v) for v in value]


def _json_mapping(value: Any) -> dict[Any, Any]:
    return {k: serialize_for_json(v) for k, v in value.items()}


_json_dumpers: dict[type, Callable[[Any], Any]] = {}


def serialize_base_model_for_json(model: BaseModel) -> dict[str, Any]:
    """:func:`serialize_base_model` under the terms of :func:`serialize_for_json`."""
    cls = type(model)
    dump = _json_model_dumpers.get(cls)
    if dump is None:
        dump = _json_model_dumper(cls)
    return dump(model)


def _json_model_dumper(cls: type[BaseModel]) -> Callable[[Any], dict[str, Any]]:
    """The compiled dumper of ``cls`` (compiled on first use)."""
    dump = _json_model_dumpers.get(cls)
    if dump is None:
        dump = _json_model_dumpers[cls] = _compile_json_model_dumper(cls)
    return dump


#: Types :func:`serialize_for_json` hands back as they are.
_JSON_AS_IS: frozenset[type] = _ATOMIC | {UUID}
_json_model_dumpers: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _compile_json_model_dumper(cls: type[BaseModel]) -> Callable[[Any], dict[str, Any]]:
    """One function per model class, with its field loop unrolled.

    This runs for every stored event (and for the message inside it), so the
    generic loop of :func:`serialize_base_model` is written out once per class:
    a field is read, left as it is when :func:`serialize_for_json` would, and
    dumped otherwise; the dict is built in one go, in field order.
    """
    plan = _plan(cls)
    namespace: dict[str, Any] = {
        "_as_is": _JSON_AS_IS,
        "_dump": serialize_for_json,
        "_dumper": _json_dumpers.get,
    }
    lines = ["def dump(model):", "    get = model.__dict__.get"]
    for i, (name, fn) in enumerate(plan):
        if fn is None:
            lines.append(f"    v{i} = get({name!r})")
        else:
            namespace[f"_fn{i}"] = fn
            lines.append(f"    v{i} = _fn{i}(model, get({name!r}))")
        # serialize_for_json inlined: a type already seen goes straight to its dumper.
        lines.append(f"    t = type(v{i})")
        lines.append("    if t not in _as_is:")
        lines.append("        d = _dumper(t)")
        lines.append(f"        v{i} = _dump(v{i}) if d is None else d(v{i})")
    items = [f"{name!r}: v{i}" for i, (name, _) in enumerate(plan)]
    items.append(f"{MODEL_KEY!r}: {class_path(cls)!r}")
    lines.append("    return {" + ", ".join(items) + "}")
    # Names enter the source only as repr() literals, so no field name can inject code.
    exec("\n".join(lines), namespace)
    return namespace["dump"]  # type: ignore[no-any-return]


# --------------------------------------------------------------------- load

_adapters: dict[type, Any] = {}


#: Active while :func:`shared_addresses` is: serialized address (as a tuple of
#: its items) -> the proxy already built for it.
_address_cache: ContextVar[dict[tuple[tuple[str, Any], ...], ActorAddressProxy] | None] = (
    ContextVar("akgentic_address_cache", default=None)
)
#: The kwargs dict :func:`_construct` hands to ``model_validate``: its values are
#: already deserialized, so the model's before-validator need not walk them again.
_preloaded: ContextVar[dict[str, Any] | None] = ContextVar("akgentic_preloaded", default=None)


@contextmanager
def shared_addresses() -> Iterator[None]:
    """Share one :class:`ActorAddressProxy` per distinct serialized address.

    Within the block (in the current thread or task), loading equal address
    dicts without a :class:`DeserializeContext` yields the same proxy object
    instead of a new one with freshly parsed UUIDs each time. Proxies are
    read-only snapshots, so sharing them is invisible; the cache lives as long
    as the outermost block (meant for decoding one log or one batch).
    """
    if _address_cache.get() is not None:
        yield
        return
    token = _address_cache.set({})
    try:
        yield
    finally:
        _address_cache.reset(token)


def _resolve_address(data: dict[str, Any], context: Any) -> ActorAddress:
    if context is not None:
        resolver = getattr(context, "resolve_address", None)
        if resolver is not None:
            return resolver(data)  # type: ignore[no-any-return]
    cache = _address_cache.get()
    if cache is None:
        return ActorAddressProxy(data)
    try:
        key = tuple(data.items())
        found = cache.get(key)
    except TypeError:  # an unhashable value: not worth sharing
        return ActorAddressProxy(data)
    if found is None:
        found = cache[key] = ActorAddressProxy(data)
    return found


def _construct(cls: Any, kwargs: dict[str, Any], context: Any, path: str) -> Any:
    try:
        if isinstance(cls, type) and issubclass(cls, SerializableBaseModel):
            # Keep the marker: it tells the model this is a stored payload.
            payload = {**kwargs, MODEL_KEY: class_path(cls)}
            token = _preloaded.set(payload)
            try:
                return cls.model_validate(payload, context=context)
            finally:
                _preloaded.reset(token)
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            return cls.model_validate(kwargs, context=context)
        factory: Any = cls
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            adapter = _adapters.get(cls)
            if adapter is None:
                from pydantic import TypeAdapter  # only needed once dataclasses are loaded

                adapter = _adapters[cls] = TypeAdapter(cls)
            try:
                return adapter.validate_python(kwargs)
            except Exception:
                return factory(**kwargs)
        return factory(**kwargs)
    except UnresolvableClassError:
        raise
    except Exception as exc:
        raise ValueError(f"Error deserializing model {path}: {exc}") from exc


def _deserialize_items(items: Any, context: Any, canonical_uuid: bool) -> list[Any]:
    out: list[Any] = []
    for item in items:
        try:
            out.append(deserialize_object(item, context, canonical_uuid))
        except UnresolvableClassError as exc:
            # One stale row must not make a whole history unreadable.
            logger.warning("Dropping list element with an unresolvable class: %s", exc)
    return out


def deserialize_object(obj: Any, context: Any = None, canonical_uuid: bool = False) -> Any:
    """Rebuild objects from data produced by :func:`serialize` (recursively)."""
    t = type(obj)
    if t is dict:
        if ADDRESS_KEY in obj:
            return _resolve_address(obj, context)
        if BYTES_KEY in obj and len(obj) == 1:
            return base64.b64decode(obj[BYTES_KEY])
        if TYPE_KEY in obj and len(obj) == 1:
            return import_class(obj[TYPE_KEY])
        marker = obj.get(MODEL_KEY)
        if marker is not None:
            cls = import_class(marker)
            kwargs = {
                k: v
                if type(v) in _PASS_THROUGH and not (canonical_uuid and type(v) is str)
                else deserialize_object(v, context, canonical_uuid)
                for k, v in obj.items()
                if k != MODEL_KEY
            }
            return _construct(cls, kwargs, context, marker)
        return {k: deserialize_object(v, context, canonical_uuid) for k, v in obj.items()}
    if t is list:
        return _deserialize_items(obj, context, canonical_uuid)
    if t is tuple:
        return tuple(_deserialize_items(obj, context, canonical_uuid))
    if t is set:
        return set(_deserialize_items(obj, context, canonical_uuid))
    if canonical_uuid and t is str and is_uuid_canonical(obj):
        return UUID(obj)
    return obj


_CONTAINERS: frozenset[type] = frozenset({dict, list, tuple, set})


class SerializableBaseModel(BaseModel):
    """Base of every persisted model: tagged dumps, marker-aware loading.

    Models whose ``extra`` is ``"forbid"`` reject unknown keys when built by hand
    but stay tolerant of payloads that carry their own ``__model__`` marker (we
    wrote those, and a field may have been removed since): unknown keys there are
    dropped with a warning.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    @model_serializer(mode="plain")
    def _serialize_model(self) -> dict[str, Any]:
        return serialize_base_model(self)

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """Validate ``obj``; a payload tagged with a subclass yields that subclass."""
        if type(obj) is dict:
            marker = obj.get(MODEL_KEY)
            if marker is not None and marker != class_path(cls) and import_class(marker) is not cls:
                result = deserialize_object(obj, kwargs.get("context"))
                if not isinstance(result, cls):
                    raise TypeError(f"payload tagged {marker!r} is not a {cls.__name__}")
                return result
        return super().model_validate(obj, *args, **kwargs)

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *args: Any, **kwargs: Any
    ) -> Self:
        """Parse JSON text, then validate it like :meth:`model_validate`."""
        return cls.model_validate(json.loads(json_data), context=kwargs.get("context"))

    @_model_validator(mode="before")
    @classmethod
    def _deserialize_input(cls, data: Any, info: ValidationInfo) -> Any:
        if type(data) is not dict:
            return data
        context = info.context
        preloaded = data is _preloaded.get()
        marker = data.get(MODEL_KEY)
        if marker is not None:
            # Any marker means a stored payload (ours, possibly under an old
            # path or a subclass's): strip it and tolerate retired fields.
            data = {k: v for k, v in data.items() if k != MODEL_KEY}
            if cls.model_config.get("extra") == "forbid":
                data = _drop_unknown(cls, data)
        if preloaded:
            # Built by _construct from values deserialize_object already loaded.
            return data
        changed: dict[str, Any] | None = None
        for key, value in data.items():
            if type(value) in _CONTAINERS:
                new = deserialize_object(value, context)
                if new is not value:
                    if changed is None:
                        changed = dict(data)
                    changed[key] = new
        return data if changed is None else changed


def _drop_unknown(cls: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    known = set(cls.model_fields)
    known.update(f.alias for f in cls.model_fields.values() if f.alias)
    unknown = [k for k in data if k not in known]
    if not unknown:
        return data
    logger.warning("Ignoring unknown keys %s in a stored %s payload", unknown, cls.__name__)
    return {k: v for k, v in data.items() if k in known}
