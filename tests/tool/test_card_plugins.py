"""Cards as plugins: registered names, YAML mappings, round trips and lazy imports.

The cards here live outside the kernel and are registered through the
``akgentic_tool_cards`` hook exactly as a third-party distribution would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

import akgentic.tool
from akgentic.plugins import PluginHost, PluginInfo, ToolCardSpec, hookimpl
from akgentic.tool import COMMAND, TOOL_CALL, BaseToolParam, Channels, ToolCard
from akgentic.tool.core.catalog import (
    card_capabilities,
    card_json_schema,
    describe_cards,
    installed_cards,
    registered_card_name,
)
from akgentic.tool.lazy import CardNotInstalledError, card_name_from_class_name

Register = Callable[..., PluginInfo]


class Roar(BaseToolParam):
    """Say something loudly."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class Whisper(BaseToolParam):
    """Say something quietly (off unless asked for)."""


class RoarTool(ToolCard):
    """A third-party card: loud speech."""

    volume: int = 3
    roar: Roar | bool = True
    whisper: Whisper | bool = False

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


class OtherTool(ToolCard):
    """A second registered card."""

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


class UnregisteredTool(ToolCard):
    """A card no plugin registers: it round-trips by class path only."""

    flag: bool = False

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


class AgentConfigLike(BaseModel):
    """How an agent configuration holds its cards."""

    tools: list[ToolCard] = []


def _plugin(*specs: ToolCardSpec) -> ModuleType:
    module = ModuleType("roar_plugin")
    setattr(module, "akgentic_tool_cards", hookimpl(lambda: list(specs)))  # noqa: B010 - unknown to mypy on a ModuleType
    return module


@pytest.fixture
def roar_plugin(register_plugin: Register) -> PluginInfo:
    return register_plugin(
        _plugin(
            ToolCardSpec(name="roar", card=RoarTool), ToolCardSpec(name="other", card=OtherTool)
        ),
        "roar",
    )


def test_a_registered_card_is_found_by_name(roar_plugin: PluginInfo) -> None:
    assert installed_cards() == {"roar": RoarTool, "other": OtherTool}


def test_a_mapping_with_a_card_name_validates_into_the_registered_class(
    roar_plugin: PluginInfo,
) -> None:
    card = ToolCard.model_validate({"card": "roar", "volume": 11})
    assert type(card) is RoarTool
    assert card == RoarTool(volume=11)


def test_a_yaml_list_of_card_mappings_is_an_agent_tools_list(roar_plugin: PluginInfo) -> None:
    document = yaml.safe_load(
        """
        tools:
          - card: roar
            volume: 5
            roar:
              instructions: Only in emergencies.
              expose: [command]
          - card: other
        """
    )
    config = AgentConfigLike.model_validate(document)
    roar, other = config.tools
    assert isinstance(roar, RoarTool) and isinstance(other, OtherTool)
    assert roar.volume == 5
    assert roar.roar == Roar(instructions="Only in emergencies.", expose={COMMAND})


def test_a_dump_carries_the_registered_name_and_the_class_path(roar_plugin: PluginInfo) -> None:
    dumped = RoarTool(volume=7).model_dump()
    assert dumped["card"] == "roar"
    assert dumped["__model__"] == f"{RoarTool.__module__}.RoarTool"


def test_a_registered_card_round_trips_through_model_dump_and_model_validate(
    roar_plugin: PluginInfo,
) -> None:
    card = RoarTool(volume=7, roar=Roar(instructions="x"), whisper=True)
    assert ToolCard.model_validate(card.model_dump()) == card
    assert RoarTool.model_validate(card.model_dump()) == card
    assert ToolCard.model_validate_json(card.model_dump_json()) == card


def test_an_agent_config_round_trips_its_cards(roar_plugin: PluginInfo) -> None:
    config = AgentConfigLike(tools=[RoarTool(volume=2), OtherTool()])
    again = AgentConfigLike.model_validate(json.loads(config.model_dump_json()))
    assert again == config


def test_the_name_survives_a_yaml_round_trip(roar_plugin: PluginInfo) -> None:
    text = yaml.safe_dump([RoarTool(volume=1).model_dump()])
    (loaded,) = yaml.safe_load(text)
    assert loaded["card"] == "roar"
    assert ToolCard.model_validate(loaded) == RoarTool(volume=1)


def test_an_unknown_name_lists_installed_cards_and_the_distribution_to_install(
    roar_plugin: PluginInfo,
) -> None:
    with pytest.raises(ValidationError) as error:
        ToolCard.model_validate({"card": "workspace"})
    message = str(error.value)
    assert "other, roar" in message
    assert "pip install akgentic-workspace" in message


def test_an_unknown_name_inside_an_agent_config_fails_validation(
    roar_plugin: PluginInfo,
) -> None:
    with pytest.raises(ValidationError, match="no tool card named 'shuot'"):
        AgentConfigLike.model_validate({"tools": [{"card": "shuot"}]})


def test_a_mapping_without_a_card_name_is_refused_by_the_base_class(
    roar_plugin: PluginInfo,
) -> None:
    with pytest.raises(ValidationError, match="card: <name>"):
        ToolCard.model_validate({"volume": 3})


def test_a_name_registered_for_another_class_is_refused_by_a_concrete_class(
    roar_plugin: PluginInfo,
) -> None:
    with pytest.raises(ValidationError, match="is a OtherTool, not a RoarTool"):
        RoarTool.model_validate({"card": "other"})


def test_a_concrete_class_accepts_its_own_name(roar_plugin: PluginInfo) -> None:
    assert RoarTool.model_validate({"card": "roar", "volume": 2}) == RoarTool(volume=2)


def test_fields_of_the_mapping_are_validated_by_the_card_class(
    roar_plugin: PluginInfo,
) -> None:
    with pytest.raises(ValidationError, match="volum"):
        ToolCard.model_validate({"card": "roar", "volum": 2})


def test_an_unregistered_card_round_trips_by_class_path(plugin_host: PluginHost) -> None:
    dumped = UnregisteredTool(flag=True).model_dump()
    assert dumped["card"] is None
    assert ToolCard.model_validate(dumped) == UnregisteredTool(flag=True)


def test_an_unimportable_class_path_is_a_validation_error(plugin_host: PluginHost) -> None:
    with pytest.raises(ValidationError, match="cannot load tool card"):
        ToolCard.model_validate({"__model__": "nowhere.to.be.Found"})


def test_a_stale_class_path_falls_back_to_the_registered_name(roar_plugin: PluginInfo) -> None:
    card = ToolCard.model_validate({"card": "roar", "__model__": "moved.away.RoarTool"})
    assert type(card) is RoarTool


def test_a_registered_name_is_known_for_its_class(roar_plugin: PluginInfo) -> None:
    assert registered_card_name(RoarTool) == "roar"
    assert registered_card_name(UnregisteredTool) is None


def test_a_plugin_registering_a_non_card_is_reported_failed_and_the_rest_still_loads(
    register_plugin: Register, plugin_host: PluginHost, roar_plugin: PluginInfo
) -> None:
    register_plugin(_plugin(ToolCardSpec(name="bogus", card=dict)), "bogus")
    assert sorted(installed_cards()) == ["other", "roar"]
    bogus = plugin_host.plugin("bogus")
    assert bogus is not None and bogus.status == "failed"
    assert bogus.error is not None and "not a ToolCard subclass" in bogus.error


def test_a_registered_card_class_is_importable_from_the_package_root(
    roar_plugin: PluginInfo,
) -> None:
    from akgentic.tool import RoarTool as Imported

    assert Imported is RoarTool


def test_a_registered_card_name_is_importable_from_the_package_root(
    roar_plugin: PluginInfo,
) -> None:
    from akgentic.tool import roar

    assert roar is RoarTool


def test_a_well_known_missing_card_names_the_distribution_to_install(
    roar_plugin: PluginInfo,
) -> None:
    with pytest.raises(ImportError) as error:
        from akgentic.tool import KnowledgeGraphTool  # noqa: F401 - the import is what raises
    assert isinstance(error.value, CardNotInstalledError)
    assert "pip install akgentic-knowledge-graph" in str(error.value)
    assert "RoarTool" in str(error.value)


def test_a_disabled_plugin_is_named_instead_of_a_pip_install(
    register_plugin: Register, plugin_host: PluginHost
) -> None:
    info = register_plugin(_plugin(ToolCardSpec(name="planning", card=OtherTool)), "planning")
    plugin_host.mark_failed(info.name, "boom")
    with pytest.raises(CardNotInstalledError, match="installed but failed"):
        from akgentic.tool import PlanningTool  # noqa: F401 - the import is what raises


def test_an_unknown_lowercase_attribute_is_a_plain_attribute_error(
    roar_plugin: PluginInfo,
) -> None:
    assert not hasattr(akgentic.tool, "not_a_thing")
    with pytest.raises(AttributeError):
        _ = akgentic.tool.__not_there__


def test_a_submodule_is_never_shadowed_by_a_card_name(register_plugin: Register) -> None:
    register_plugin(_plugin(ToolCardSpec(name="testing", card=OtherTool)), "shadow")
    import akgentic.tool.testing as testing_module
    from akgentic.tool import testing

    assert testing is testing_module


@pytest.mark.parametrize(
    ("class_name", "card_name"),
    [
        ("WorkspaceTool", "workspace"),
        ("KnowledgeGraphTool", "knowledge_graph"),
        ("MCPTool", "mcp"),
        ("Search", "search"),
    ],
)
def test_class_names_map_to_conventional_card_names(class_name: str, card_name: str) -> None:
    assert card_name_from_class_name(class_name) == card_name


def test_capabilities_are_read_from_param_fields(plugin_host: PluginHost) -> None:
    roar, whisper = card_capabilities(RoarTool)
    assert (roar.name, roar.param, roar.channels, roar.default_on) == (
        "roar",
        Roar,
        (TOOL_CALL, COMMAND),
        True,
    )
    assert (whisper.name, whisper.channels, whisper.default_on) == ("whisper", (), False)


def test_installed_cards_are_described_with_their_plugin_and_channels(
    roar_plugin: PluginInfo,
) -> None:
    described = {info.name: info.as_dict() for info in describe_cards()}
    assert list(described) == ["other", "roar"]
    assert described["roar"]["plugin"] == "roar"
    assert described["roar"]["class"].endswith(".RoarTool")
    assert described["roar"]["channels"] == ["tool_call", "command"]
    assert described["other"]["capabilities"] == []


def test_the_json_schema_pins_the_card_name_and_refuses_unknown_keys(
    roar_plugin: PluginInfo,
) -> None:
    schema = card_json_schema("roar")
    assert schema["properties"]["card"] == {
        "const": "roar",
        "title": "Card",
        "description": "Registered name of the card.",
    }
    assert schema["required"][0] == "card"
    assert schema["additionalProperties"] is False
    assert {"volume", "roar", "whisper"} <= set(schema["properties"])


def test_the_json_schema_of_an_unknown_card_is_an_error(roar_plugin: PluginInfo) -> None:
    with pytest.raises(ValueError, match="available: other, roar"):
        card_json_schema("nope")
