"""JSON Patch (RFC 6902) between two JSON documents, and its application.

The stream's ``STATE_DELTA`` events carry :func:`make_patch` of the state before
and after a stored event; a client keeps its copy current with :func:`apply_patch`
(the example client and the tests use it). Only ``add``, ``remove`` and
``replace`` are produced; :func:`apply_patch` also honours ``test``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["apply_patch", "make_patch"]


def _pointer(path: str, key: str | int) -> str:
    token = str(key).replace("~", "~0").replace("/", "~1")
    return f"{path}/{token}"


def make_patch(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations that turn ``old`` into ``new`` (empty when they are equal).

    Objects are compared key by key and lists index by index (a longer list
    gets ``add`` at its end, a shorter one ``remove`` from its end, last index
    first); anything else that differs is replaced whole.
    """
    if old == new and type(old) is type(new):
        return []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        ops: list[dict[str, Any]] = [
            {"op": "remove", "path": _pointer(path, key)} for key in old if key not in new
        ]
        for key, value in new.items():
            if key in old:
                ops += make_patch(old[key], value, _pointer(path, key))
            else:
                ops.append({"op": "add", "path": _pointer(path, key), "value": value})
        return ops
    if _is_list(old) and _is_list(new):
        ops = []
        common = min(len(old), len(new))
        for index in range(common):
            ops += make_patch(old[index], new[index], _pointer(path, index))
        for index in range(common, len(new)):
            ops.append({"op": "add", "path": _pointer(path, index), "value": new[index]})
        for index in reversed(range(common, len(old))):
            ops.append({"op": "remove", "path": _pointer(path, index)})
        return ops
    return [{"op": "replace", "path": path, "value": new}]


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"not a JSON pointer: {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def apply_patch(document: Any, operations: Sequence[Mapping[str, Any]]) -> Any:
    """``document`` with ``operations`` applied (a new document; the argument is kept).

    Raises ``ValueError`` for an operation that does not fit the document.
    """
    result = copy.deepcopy(document)
    for operation in operations:
        op = operation.get("op")
        tokens = _tokens(str(operation.get("path", "")))
        value = copy.deepcopy(operation.get("value"))
        if not tokens:
            if op in ("add", "replace"):
                result = value
                continue
            if op == "test":
                if result != value:
                    raise ValueError("test failed at the root")
                continue
            raise ValueError(f"cannot {op} the root")
        parent = result
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if op == "add":
                if not 0 <= index <= len(parent):
                    raise ValueError(f"index {index} out of range")
                parent.insert(index, value)
            elif op == "remove":
                del parent[index]
            elif op == "replace":
                parent[index] = value
            elif op == "test":
                if parent[index] != value:
                    raise ValueError(f"test failed at {operation.get('path')}")
            else:
                raise ValueError(f"unsupported operation {op!r}")
        else:
            if op in ("add", "replace"):
                if op == "replace" and last not in parent:
                    raise ValueError(f"nothing to replace at {operation.get('path')}")
                parent[last] = value
            elif op == "remove":
                del parent[last]
            elif op == "test":
                if parent.get(last) != value:
                    raise ValueError(f"test failed at {operation.get('path')}")
            else:
                raise ValueError(f"unsupported operation {op!r}")
    return result
