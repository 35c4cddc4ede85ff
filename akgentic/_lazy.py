"""Lazy package exports: a public name's module is imported the first time it is used.

Packages export this way so that importing them stays cheap (``import akgentic.team``
does not load every store, ``import akgentic.llm`` does not load pydantic-ai) while
``from package import Name`` keeps working.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Args:
        package: The package's ``__name__`` (used in the AttributeError).
        names: Public name → module that defines it.
        namespace: The package's ``globals()``; a resolved name is stored there, so
            the module is looked up once.
    """

    def get_attribute(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def list_names() -> list[str]:
        return sorted(set(namespace) | set(names))

    return get_attribute, list_names
