"""The registry as a parameter: names recorded at validation, explicit resolvers, one scan."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core.messages.message import UserMessage
from akgentic.core.utils.serializer import class_path
from akgentic.plugins import (
    MessageTypeSpec,
    PluginHost,
    PluginInfo,
    ToolCardSpec,
    current_registry,
    get_registry,
    hookimpl,
    use_registry,
)
from akgentic.team.errors import EventLogUnreadableError
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.codec import decode_event, encode_event, loads
from akgentic.tool import ToolCard
from akgentic.tool.core.catalog import installed_cards, lookup_card_class, registered_card_name

Register = Callable[..., PluginInfo]


class BellTool(ToolCard):
    """A card registered by an inline plugin."""

    loud: bool = True

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


def _plugin(hook: str, *records: object) -> ModuleType:
    module = ModuleType("seam_plugin")
    setattr(module, hook, hookimpl(lambda: list(records)))
    return module


def _host_with(hook: str, *records: object) -> PluginHost:
    host = PluginHost(autoload=False, env={})
    host.register(_plugin(hook, *records), "seam")
    return host


# -- the card name is data ------------------------------------------------------------


def test_a_card_keeps_its_registered_name_when_the_dumping_process_lacks_the_plugin(
    plugin_host: PluginHost, register_plugin: Register
) -> None:
    register_plugin(_plugin("akgentic_tool_cards", ToolCardSpec(name="bell", card=BellTool)), "p")
    built = BellTool(loud=False)
    loaded = ToolCard.model_validate({"card": "bell"})
    plugin_host.unregister("p")
    assert "bell" not in get_registry().tool_cards()
    assert built.model_dump()["card"] == "bell"
    assert loaded.model_dump()["card"] == "bell"


def test_a_card_of_an_unregistered_class_dumps_no_name_even_if_registered_later(
    plugin_host: PluginHost, register_plugin: Register
) -> None:
    built = BellTool()
    register_plugin(_plugin("akgentic_tool_cards", ToolCardSpec(name="bell", card=BellTool)), "p")
    assert built.model_dump()["card"] is None
    assert BellTool().model_dump()["card"] == "bell"


def test_the_catalog_reads_the_registry_it_is_given(plugin_host: PluginHost) -> None:
    own = _host_with("akgentic_tool_cards", ToolCardSpec(name="bell", card=BellTool)).registry
    assert installed_cards(own) == {"bell": BellTool}
    assert lookup_card_class("bell", own) is BellTool
    assert registered_card_name(BellTool, own) == "bell"
    assert registered_card_name(BellTool) is None  # the (empty) process registry
    with pytest.raises(ValueError, match="bell"):
        lookup_card_class("bell")


def test_use_registry_makes_a_registry_current_for_the_block_only(plugin_host: PluginHost) -> None:
    own = _host_with("akgentic_tool_cards", ToolCardSpec(name="bell", card=BellTool)).registry
    with use_registry(own):
        assert current_registry() is own
        card = ToolCard.model_validate({"card": "bell", "loud": False})
        assert type(card) is BellTool and card.model_dump()["card"] == "bell"
    assert current_registry() is plugin_host.registry


# -- former class paths answered by an explicit resolver ---------------------------------------


def test_importing_the_team_layer_registers_no_fallback_in_the_core_serializer() -> None:
    code = (
        "import akgentic.team, akgentic.team.resolve, akgentic.team.stores.codec\n"
        "from akgentic.core.utils import serializer\n"
        "print(len(serializer._fallbacks))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def _stored_under(path: str) -> tuple[dict[str, Any], PersistedEvent]:
    team_id = uuid4()
    message = UserMessage(content="hi")
    message.team_id = team_id
    event = PersistedEvent(team_id=team_id, sequence=1, event=message)
    text = encode_event(event).replace(class_path(UserMessage), path)
    assert path in text
    return loads(text), event


def test_the_codec_answers_former_paths_from_the_resolver_it_is_handed(
    plugin_host: PluginHost,
) -> None:
    data, event = _stored_under("gone.module.UserMessage")
    with pytest.raises(EventLogUnreadableError, match=r"gone\.module"):
        decode_event(data, event.team_id, 1)
    answers = {"gone.module.UserMessage": UserMessage}
    decoded = decode_event(data, event.team_id, 1, resolver=answers.get)
    assert decoded.event == event.event


def test_the_codec_default_resolver_uses_the_current_registrys_aliases(
    plugin_host: PluginHost,
) -> None:
    data, event = _stored_under("former.place.UserMessage")
    own = _host_with(
        "akgentic_message_types",
        MessageTypeSpec(
            name="UserMessage", message_class=UserMessage, aliases=("former.place.UserMessage",)
        ),
    ).registry
    with use_registry(own):
        assert decode_event(data, event.team_id, 1).event == event.event
    with pytest.raises(EventLogUnreadableError, match=r"former\.place"):
        decode_event(data, event.team_id, 1)  # the process registry knows no such alias


# -- one scan of the entry points ---------------------------------------------------------


def test_discovery_enumerates_the_entry_point_group_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import stevedore._cache

    calls: list[str] = []
    real_entry_points = importlib.metadata.entry_points
    real_group_all = stevedore._cache.get_group_all

    def counted_entry_points(**kwargs: Any) -> Any:
        calls.append(f"importlib:{kwargs.get('group')}")
        return real_entry_points(**kwargs)

    def counted_group_all(group: str, path: tuple[str, ...] | None = None) -> Any:
        calls.append(f"stevedore:{group}")
        return real_group_all(group, path)

    monkeypatch.setattr(importlib.metadata, "entry_points", counted_entry_points)
    monkeypatch.setattr(stevedore._cache, "get_group_all", counted_group_all)
    host = PluginHost(env={})
    host.load()
    assert calls == ["importlib:akgentic"]
    assert host.plugin("core") is not None and host.plugin("hello") is not None
    assert {info.status for info in host.plugins()} == {"loaded"}
