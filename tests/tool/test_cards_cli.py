"""The ``cards`` command group: listing installed cards and printing a card's schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from akgentic.plugins import PluginInfo, ToolCardSpec, hookimpl
from akgentic.tool import COMMAND, LLM_CONTEXT, BaseToolParam, Channels, ToolCard
from akgentic.tool.cli import cards_app


class Tally(BaseToolParam):
    """Count things."""


class Board(BaseToolParam):
    """Show the board as context."""

    expose: set[Channels] = {LLM_CONTEXT, COMMAND}


class TallyTool(ToolCard):
    """A card with two capabilities, one of them off."""

    tally: Tally | bool = True
    board: Board | bool = False
    start: int = 0

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


@pytest.fixture
def tally_plugin(register_plugin: Callable[..., PluginInfo]) -> PluginInfo:
    module = ModuleType("tally_plugin")
    specs = [ToolCardSpec(name="tally", card=TallyTool, description="Count things, one by one.")]
    setattr(module, "akgentic_tool_cards", hookimpl(lambda: specs))  # noqa: B010
    return register_plugin(module, "tally")


def test_cards_lists_installed_cards_as_json(tally_plugin: PluginInfo) -> None:
    result = CliRunner().invoke(cards_app(), ["--json"])
    assert result.exit_code == 0, result.output
    (card,) = json.loads(result.output)
    assert card["name"] == "tally" and card["plugin"] == "tally"
    assert card["description"] == "Count things, one by one."
    assert card["channels"] == ["tool_call"]
    assert [(c["name"], c["default_on"]) for c in card["capabilities"]] == [
        ("tally", True),
        ("board", False),
    ]


def test_cards_prints_a_table_by_default(tally_plugin: PluginInfo) -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cards_app(), [])
    assert result.exit_code == 0, result.output
    assert "tally" in result.output and "board (off)" in result.output
    assert "Count things, one by one." in result.output


def test_cards_schema_prints_the_card_mapping_schema(tally_plugin: PluginInfo) -> None:
    result = CliRunner().invoke(cards_app(), ["schema", "tally"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    assert schema["properties"]["card"]["const"] == "tally"
    assert "start" in schema["properties"]


def test_cards_schema_of_an_unknown_card_fails_with_the_installed_list(
    tally_plugin: PluginInfo,
) -> None:
    result = CliRunner().invoke(cards_app(), ["schema", "planning"])
    assert result.exit_code == 1
    assert "available: tally" in result.output
    assert "pip install akgentic-planning" in result.output
