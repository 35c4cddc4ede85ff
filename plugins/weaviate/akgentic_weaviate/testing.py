"""``FakeWeaviateClient``: the weaviate-client v4 calls this plugin makes, answered in memory.

No Weaviate server can run on the machines this project is built on, so the
plugin's own logic is tested at the network boundary: this fake stands where the
server would, and **evaluates weaviate-client's own filter objects** (``_FilterAnd``,
``_FilterOr`` and ``_FilterValue`` with Equal, Like and ContainsAny), capitalises
class names, keys objects by uuid, separates tenants and refuses tenant misuse as
the server does. It proves how the plugin uses the client (filters, ids, stamping,
naming, batching, tenants); it proves nothing about the server's own behaviour
(HNSW recall, tokenisation, consistency, gRPC transport), which only a real
cluster shows: set ``AKGENTIC_TEST_WEAVIATE_URL`` to run the same kit there.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from weaviate.collections.classes.filters import (
    _FilterAnd,
    _FilterOr,
    _FilterValue,
    _Operator,
)

__all__ = ["FakeWeaviateClient", "matches"]


def _like(pattern: str) -> re.Pattern[str]:
    parts = []
    for char in pattern:
        parts.append(".*" if char == "*" else "." if char == "?" else re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def matches(condition: Any, properties: dict[str, Any]) -> bool:
    """Whether an object's ``properties`` satisfy a weaviate-client filter object."""
    if condition is None:
        return True
    if isinstance(condition, _FilterAnd):
        return all(matches(f, properties) for f in condition.filters)
    if isinstance(condition, _FilterOr):
        return any(matches(f, properties) for f in condition.filters)
    if isinstance(condition, _FilterValue) and isinstance(condition.target, str):
        value = properties.get(condition.target)
        if value is None:
            return False
        if condition.operator == _Operator.EQUAL:
            return bool(value == condition.value)
        if condition.operator == _Operator.LIKE:
            return _like(str(condition.value)).fullmatch(str(value)) is not None
        if condition.operator == _Operator.CONTAINS_ANY:
            return value in list(condition.value)  # type: ignore[arg-type]
    raise NotImplementedError(f"the fake does not evaluate {condition!r}")


@dataclass
class _Class:
    name: str
    multi_tenant: bool
    tenants: dict[str | None, dict[str, dict[str, Any]]] = field(default_factory=dict)


class _Batch:
    def __init__(self, owner: _Collection) -> None:
        self._owner = owner
        self.failed_objects: list[Any] = []

    @contextmanager
    def dynamic(self) -> Iterator[Any]:
        pending: list[tuple[str, dict[str, Any], list[float]]] = []

        def add_object(properties: dict[str, Any], uuid: str, vector: list[float]) -> None:
            pending.append((uuid, dict(properties), list(vector)))

        self.failed_objects = []
        yield SimpleNamespace(add_object=add_object)
        objects = self._owner._objects()
        with self._owner._lock:
            for uuid, properties, vector in pending:
                objects[uuid] = {"uuid": uuid, "properties": properties, "vector": vector}


class _Collection:
    def __init__(self, data: _Class, tenant: str | None, lock: threading.RLock) -> None:
        self._data = data
        self._tenant = tenant
        self._lock = lock
        self.batch = _Batch(self)
        self.tenants = SimpleNamespace(get=self._tenants_get, create=self._tenants_create)
        self.data = SimpleNamespace(delete_many=self._delete_many)
        self.query = SimpleNamespace(near_vector=self._near_vector)
        self.aggregate = SimpleNamespace(over_all=self._over_all)
        self.config = SimpleNamespace(
            get=lambda: SimpleNamespace(
                multi_tenancy_config=SimpleNamespace(enabled=data.multi_tenant)
            )
        )

    def with_tenant(self, tenant: str) -> _Collection:
        return _Collection(self._data, tenant, self._lock)

    def _objects(self) -> dict[str, dict[str, Any]]:
        if self._data.multi_tenant and self._tenant is None:
            raise ValueError(f"class {self._data.name} has multi-tenancy: name a tenant")
        if not self._data.multi_tenant and self._tenant is not None:
            raise ValueError(f"class {self._data.name} has no multi-tenancy")
        if self._tenant not in self._data.tenants:
            raise ValueError(f"tenant {self._tenant!r} does not exist")
        return self._data.tenants[self._tenant]

    def _tenants_get(self) -> dict[str, Any]:
        return {t: SimpleNamespace(name=t) for t in self._data.tenants if t is not None}

    def _tenants_create(self, tenants: list[Any]) -> None:
        with self._lock:
            for tenant in tenants:
                if tenant.name in self._data.tenants:
                    raise ValueError(f"tenant {tenant.name!r} already exists")
                self._data.tenants[tenant.name] = {}

    def _delete_many(self, where: Any) -> Any:
        with self._lock:
            objects = self._objects()
            doomed = [u for u, o in objects.items() if matches(where, o["properties"])]
            for uuid in doomed:
                del objects[uuid]
        return SimpleNamespace(matches=len(doomed), successful=len(doomed), failed=0)

    def _near_vector(
        self, near_vector: list[float], limit: int, filters: Any = None, **_: Any
    ) -> Any:
        with self._lock:
            found = []
            for obj in self._objects().values():
                if not matches(filters, obj["properties"]):
                    continue
                found.append((_distance(near_vector, obj["vector"]), obj))
        found.sort(key=lambda item: item[0])
        objects = [
            SimpleNamespace(
                uuid=obj["uuid"],
                properties=dict(obj["properties"]),
                metadata=SimpleNamespace(distance=distance),
            )
            for distance, obj in found[:limit]
        ]
        return SimpleNamespace(objects=objects)

    def _over_all(self, total_count: bool = True, filters: Any = None) -> Any:
        with self._lock:
            count = sum(1 for o in self._objects().values() if matches(filters, o["properties"]))
        return SimpleNamespace(total_count=count)

    def iterator(self) -> Iterator[Any]:
        with self._lock:
            items = list(self._objects().values())
        for obj in items:
            yield SimpleNamespace(uuid=obj["uuid"], properties=dict(obj["properties"]))


def _distance(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return 1.0 - dot / norm


def _capitalised(name: str) -> str:
    return name[:1].upper() + name[1:]


class _Collections:
    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._classes: dict[str, _Class] = {}

    def exists(self, name: str) -> bool:
        return _capitalised(name) in self._classes

    def create(self, name: str, multi_tenancy_config: Any = None, **_: Any) -> _Collection:
        cls = _capitalised(name)
        with self._lock:
            if cls in self._classes:
                raise ValueError(f"class {cls} already exists")
            multi = bool(multi_tenancy_config is not None)
            data = _Class(name=cls, multi_tenant=multi)
            if not multi:
                data.tenants[None] = {}
            self._classes[cls] = data
        return self.get(cls)

    def get(self, name: str) -> _Collection:
        data = self._classes.get(_capitalised(name))
        if data is None:
            raise ValueError(f"class {name} does not exist")
        return _Collection(data, None, self._lock)

    def list_all(self, simple: bool = True) -> dict[str, Any]:
        return {name: SimpleNamespace(name=name) for name in self._classes}


class FakeWeaviateClient:
    """Stands where a Weaviate server would; see the module docstring for what it proves."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.collections = _Collections(self._lock)
        self.closed = False

    def close(self) -> None:
        self.closed = True
