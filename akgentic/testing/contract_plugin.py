"""The registration step every contract kit shares: the implementation's plugin, alone."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["register_contract_plugin"]


def register_contract_plugin(
    contract: object,
    name: str | None,
    plugin: object | None,
    register_plugin: Callable[..., Any],
    *,
    name_attribute: str,
    what: str,
) -> None:
    """Register ``plugin`` (hook implementations, or their dotted import path) for a kit.

    Every kit test runs in an isolated plugin host, so what is installed around the
    test can neither hide a missing registration nor add a clashing one. ``name``
    and ``plugin`` go together: both for a registered ``what``, neither otherwise.
    """
    if (name is None) != (plugin is None):
        pytest.fail(
            f"{type(contract).__name__} sets only one of {name_attribute} and plugin: set "
            f"both for a registered {what}, neither for an unregistered one"
        )
    if plugin is None:
        return
    if isinstance(plugin, str):
        plugin = importlib.import_module(plugin)
    register_plugin(plugin, f"contract-{name}")
