"""The ``cards`` command group: listing installed cards and printing a card's schema."""

from __future__ import annotations

import json
import subprocess
import sys
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
    setattr(module, "akgentic_tool_cards", hookimpl(lambda: specs))  # noqa: B010 - unknown to mypy on a ModuleType
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


#: The catalog of the tool document: card name -> the distribution that provides it.
CATALOG = {
    "workspace": "akgentic-workspace",
    "planning": "akgentic-planning",
    "knowledge_graph": "akgentic-knowledge-graph",
    "search": "akgentic-search",
    "mcp": "akgentic-mcp",
    "metadata": "akgentic-metadata",
    "notification": "akgentic-notification",
    "skill": "akgentic-skill",
    "model": "akgentic-model",
}


def test_the_installed_cli_lists_every_catalog_card_with_its_description() -> None:
    # The real environment (every catalog plugin installed by make install), in a
    # fresh process: what a user typing ``akgentic cards`` sees.
    for name in CATALOG:
        pytest.importorskip(f"akgentic_{name}")
    done = subprocess.run(
        [sys.executable, "-m", "akgentic.cli", "cards", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    listed = {card["name"]: card for card in json.loads(done.stdout)}
    for name, distribution in CATALOG.items():
        assert name in listed, f"akgentic cards does not list {name}"
        card = listed[name]
        assert card["distribution"] == distribution
        assert card["description"].strip(), f"{name} has no description"
        assert card["class"].startswith(f"akgentic_{name}.")
