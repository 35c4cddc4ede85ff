"""Two team managers in one process, each with its own plugin selection.

Two real distributions (``*.dist-info`` folders with entry points) each provide a
tool card and an agent class holding it. Each manager gets a plugin host that
discovers them with a different ``AKGENTIC_DISABLE_PLUGINS``; the process-wide
host is replaced by an empty one for the test, so any lookup that still reached
for the global would find nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.core import ActorSystem
from akgentic.plugins import PluginHost, PluginRegistry, use_host
from akgentic.team import SqliteEventStore, TeamCard, TeamManager
from akgentic.team.card_yaml import TeamCardValidationError
from akgentic.testing.plugins import FakeDistributions

PLUGIN = '''
from typing import Any

from akgentic.core import Akgent, BaseConfig, BaseState
from akgentic.plugins import AgentClassSpec, ToolCardSpec, hookimpl
from akgentic.tool import ToolCard


class {Colour}Tool(ToolCard):
    """A card only the {colour} plugin provides."""

    shade: int = 1

    def get_tools(self) -> list[Any]:
        return []


class {Colour}Config(BaseConfig):
    """A configuration that holds tool cards."""

    tools: list[ToolCard] = []


class {Colour}Holder(Akgent[{Colour}Config, BaseState]):
    """An agent that only keeps its cards."""


@hookimpl
def akgentic_tool_cards():
    return [ToolCardSpec(name="{colour}", card={Colour}Tool)]


@hookimpl
def akgentic_agent_classes():
    return [AgentClassSpec(name="{Colour}Holder", agent_class={Colour}Holder)]
'''

CARD = """\
name: {colour}-team
entry_point:
  card:
    agent_class: {Colour}Holder
    description: Holds a {colour} card
    config:
      name: "@Holder"
      role: Holder
      tools:
        - card: {colour}
          shade: 7
"""


def _card(colour: str) -> str:
    return CARD.format(colour=colour, Colour=colour.capitalize())


@pytest.fixture
def colour_plugins(fake_distributions: FakeDistributions) -> FakeDistributions:
    for colour in ("red", "blue"):
        module = f"akgentic_{colour}"
        fake_distributions.add(
            f"akgentic-{colour}",
            entry_points={colour: module},
            modules={module: PLUGIN.format(colour=colour, Colour=colour.capitalize())},
        )
    return fake_distributions


@pytest.fixture
def empty_process_host() -> Iterator[PluginHost]:
    with use_host(PluginHost(autoload=False, env={})) as host:
        yield host


def _registry(without: str) -> PluginRegistry:
    return PluginHost(env={"AKGENTIC_DISABLE_PLUGINS": without}).registry


def test_two_managers_with_different_plugins_each_resolve_only_their_own_cards(
    colour_plugins: FakeDistributions, empty_process_host: PluginHost, tmp_path: Path
) -> None:
    red_registry, blue_registry = _registry("blue"), _registry("red")
    system = ActorSystem()
    red_store = SqliteEventStore(tmp_path / "red.db")
    blue_store = SqliteEventStore(tmp_path / "blue.db")
    try:
        red = TeamManager(system, red_store, registry=red_registry, idle_delay=60)
        blue = TeamManager(system, blue_store, registry=blue_registry, idle_delay=60)
        assert red.registry is red_registry and blue.registry is blue_registry

        red_card = red.parse_card(_card("red"))
        blue_card = blue.parse_card(_card("blue"))
        red_tool = red_card.entry_point.card.config.tools[0]  # type: ignore[attr-defined]
        blue_tool = blue_card.entry_point.card.config.tools[0]  # type: ignore[attr-defined]
        assert type(red_tool).__name__ == "RedTool" and red_tool.shade == 7
        assert type(blue_tool).__name__ == "BlueTool"
        assert red_card.entry_point.card.get_agent_class().__name__ == "RedHolder"

        # Each refuses the other's card, listing only what its own plugins register.
        with pytest.raises(TeamCardValidationError) as refused:
            red.parse_card(_card("blue"))
        message = str(refused.value) + " ".join(str(p) for p in refused.value.problems)
        assert "BlueHolder" in message and "RedHolder" in message
        with pytest.raises(TeamCardValidationError) as refused:
            blue.parse_card(_card("red"))
        message = str(refused.value) + " ".join(str(p) for p in refused.value.problems)
        assert "RedHolder" in message and "BlueHolder" in message

        # The recorded card name travels with the card, not with the dumping process.
        assert red_tool.model_dump()["card"] == "red"

        # A full life cycle in each: create, stop, resume from the log.
        runtimes = [red.create_team(red_card), blue.create_team(blue_card)]
        for manager, runtime in zip((red, blue), runtimes, strict=True):
            manager.stop_team(runtime.id)
            resumed = manager.resume_team(runtime.id)
            process = manager.get_team(resumed.id)
            assert process is not None
            tool = process.team_card.entry_point.card.config.tools[0]  # type: ignore[attr-defined]
            assert tool.shade == 7
            manager.stop_team(resumed.id)
    finally:
        system.shutdown(timeout=10)
        red_store.close()
        blue_store.close()


def test_a_card_loaded_without_a_manager_uses_the_process_registry(
    colour_plugins: FakeDistributions, empty_process_host: PluginHost
) -> None:
    with pytest.raises(TeamCardValidationError):
        TeamCard.from_yaml(_card("red"))
