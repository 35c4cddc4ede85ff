"""The registry facade: per-kind maps, duplicates, unknown names, failing hooks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import pytest

from akgentic.plugins import (
    DuplicatePluginNameError,
    EventStoreSpec,
    PluginHost,
    PluginInfo,
    ToolCardSpec,
    UnknownPluginNameError,
    VectorBackendSpec,
    get_registry,
    hookimpl,
)
from akgentic.team.store import EventStore
from akgentic.tool import ToolCard

Register = Callable[..., PluginInfo]


class _Card(ToolCard):
    """A minimal ToolCard (records are checked: a tool card must be one)."""

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


def _never_opened(url: str) -> EventStore:
    raise AssertionError(f"the registry must not open stores ({url})")


def _plugin(**hooks: Callable[..., Any]) -> object:
    module = ModuleType("inline_plugin")
    for name, fn in hooks.items():
        setattr(module, name, hookimpl(fn))
    return module


def test_records_from_several_plugins_are_flattened_by_name(register_plugin: Register) -> None:
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="a", card=_Card)]), "one"
    )
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="b", card=_Card)]), "two"
    )
    cards = get_registry().tool_cards()
    assert sorted(cards) == ["a", "b"]
    assert cards["a"].card is _Card
    owner = get_registry().owner("tool_cards", "b")
    assert owner is not None and owner.name == "two"


def test_same_name_from_two_plugins_is_an_error_naming_both(register_plugin: Register) -> None:
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="dup", card=_Card)]), "first"
    )
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="dup", card=_Card)]), "second"
    )
    with pytest.raises(DuplicatePluginNameError) as err:
        get_registry().tool_cards()
    message = str(err.value)
    assert "'first'" in message and "'second'" in message and "'dup'" in message


def test_unknown_name_lists_what_is_available_and_what_to_install(
    register_plugin: Register,
) -> None:
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="shout", card=_Card)]), "p"
    )
    with pytest.raises(UnknownPluginNameError) as err:
        get_registry().get("tool_cards", "workspace")
    message = str(err.value)
    assert "shout" in message
    assert "pip install akgentic-workspace" in message


def test_hook_returning_a_wrong_record_type_marks_that_plugin_failed(
    plugin_host: PluginHost, register_plugin: Register
) -> None:
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [VectorBackendSpec(name="x", factory=dict)]), "bad"
    )
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="ok", card=_Card)]), "good"
    )
    assert list(get_registry().tool_cards()) == ["ok"]
    bad = plugin_host.plugin("bad")
    assert bad is not None and bad.status == "failed"
    assert bad.error is not None and "ToolCardSpec" in bad.error


def test_hook_that_raises_is_reported_and_others_still_contribute(
    plugin_host: PluginHost, register_plugin: Register
) -> None:
    def explode() -> Iterable[ToolCardSpec]:
        raise ValueError("cannot describe myself")

    register_plugin(_plugin(akgentic_tool_cards=explode), "exploding")
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="ok", card=_Card)]), "good"
    )
    assert list(get_registry().tool_cards()) == ["ok"]
    info = plugin_host.plugin("exploding")
    assert info is not None and info.status == "failed"
    assert info.error is not None and "cannot describe myself" in info.error


def test_event_store_is_found_by_url_scheme(register_plugin: Register) -> None:
    spec = EventStoreSpec(name="memo", schemes=("memo", "memo+x"), open=_never_opened)
    register_plugin(_plugin(akgentic_event_stores=lambda: [spec]), "memo-plugin")
    assert get_registry().event_store_for_scheme("memo+x") is spec
    with pytest.raises(UnknownPluginNameError, match="pip install akgentic-postgres"):
        get_registry().event_store_for_scheme("postgresql")


def test_url_scheme_claimed_by_two_stores_is_an_error(register_plugin: Register) -> None:
    a = EventStoreSpec(name="a", schemes=("same",), open=_never_opened)
    b = EventStoreSpec(name="b", schemes=("same",), open=_never_opened)
    register_plugin(_plugin(akgentic_event_stores=lambda: [a]), "pa")
    register_plugin(_plugin(akgentic_event_stores=lambda: [b]), "pb")
    with pytest.raises(DuplicatePluginNameError, match="same"):
        get_registry().event_stores()


def test_unregistered_plugin_no_longer_contributes(
    plugin_host: PluginHost, register_plugin: Register
) -> None:
    register_plugin(
        _plugin(akgentic_tool_cards=lambda: [ToolCardSpec(name="gone", card=_Card)]), "tmp"
    )
    assert "gone" in get_registry().tool_cards()
    plugin_host.unregister("tmp")
    assert "gone" not in get_registry().tool_cards()


@pytest.mark.parametrize("name", ["", " spaced", "a b", "-lead", "x/y"])
def test_record_names_must_be_plain_identifiers(name: str) -> None:
    with pytest.raises(ValueError, match="invalid tool card name"):
        ToolCardSpec(name=name, card=_Card)


def test_event_store_record_requires_a_scheme() -> None:
    with pytest.raises(ValueError, match="no URL scheme"):
        EventStoreSpec(name="nowhere", schemes=(), open=_never_opened)
