"""The shout card, tested the way a third-party card author would test theirs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import akgentic_hello.plugin
import pytest
import yaml
from akgentic_hello.shout import Shout, Shouted, ShoutLog, ShoutRules, ShoutTool

from akgentic.plugins import PluginInfo, get_registry
from akgentic.tool import ToolCard, ToolFactory
from akgentic.tool.core.catalog import card_json_schema, describe_cards
from akgentic.tool.testing import RecordingObserver

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelRequest

Register = Callable[..., PluginInfo]


class Retry(Exception):  # noqa: N818 - mirrors pydantic-ai's ModelRetry
    """Stand-in for the LLM library's retry signal."""


@pytest.fixture
def hello(register_plugin: Register) -> PluginInfo:
    return register_plugin(akgentic_hello.plugin, "hello")


@pytest.fixture
def observer() -> RecordingObserver:
    return RecordingObserver()


def test_the_plugin_registers_the_shout_card(hello: PluginInfo) -> None:
    assert get_registry().tool_cards()["shout"].card is ShoutTool
    owner = get_registry().owner("tool_cards", "shout")
    assert owner is not None and owner.name == "hello"


def test_a_yaml_mapping_names_the_card(hello: PluginInfo) -> None:
    (card,) = (
        ToolCard.model_validate(item)
        for item in yaml.safe_load(
            """
            - card: shout
              shout: {suffix: "!!", instructions: Never shout at the user.}
              rules: false
            """
        )
    )
    assert isinstance(card, ShoutTool)
    assert card.shout == Shout(suffix="!!", instructions="Never shout at the user.")
    assert card.rules is False


def test_the_card_round_trips_with_its_name(hello: PluginInfo) -> None:
    card = ShoutTool(shout=Shout(suffix="?"), log=ShoutLog(recent=1))
    dumped = card.model_dump()
    assert dumped["card"] == "shout"
    assert dumped["__model__"] == "akgentic_hello.shout.ShoutTool"
    assert ToolCard.model_validate(dumped) == card


def test_the_card_class_is_importable_from_the_kernel_root(hello: PluginInfo) -> None:
    from akgentic.tool import ShoutTool as FromRoot

    assert FromRoot is ShoutTool


def test_the_card_is_listed_on_all_four_channels(hello: PluginInfo) -> None:
    (info,) = describe_cards()
    assert info.as_dict()["channels"] == ["system_prompt", "tool_call", "command", "llm_context"]


def test_the_schema_accepts_the_card_fields(hello: PluginInfo) -> None:
    schema = card_json_schema("shout")
    assert schema["properties"]["card"]["const"] == "shout"
    assert {"shout", "rules", "log"} <= set(schema["properties"])


def test_the_tool_shouts_and_publishes_an_event(observer: RecordingObserver) -> None:
    (shout,) = ToolFactory([ShoutTool()], observer=observer).get_tools()
    assert shout("fire in the hold") == "FIRE IN THE HOLD!"
    assert observer.events == [Shouted(text="FIRE IN THE HOLD!")]


def test_instructions_reach_the_tool_description_and_keep_the_argument_described() -> None:
    from pydantic_ai import Tool

    (shout,) = ShoutTool(shout=Shout(instructions="Only in English.")).get_tools()
    tool = Tool(shout)
    assert tool.description == (
        "Repeat a text in capitals, loudly.\n\nAdditional Instructions:\nOnly in English."
    )
    assert tool.function_schema.json_schema["properties"]["text"]["description"] == (
        "What to shout."
    )


def test_an_empty_shout_asks_the_model_to_retry(observer: RecordingObserver) -> None:
    (shout,) = ToolFactory([ShoutTool()], observer=observer, retry_exception=Retry).get_tools()
    with pytest.raises(Retry, match="Nothing to shout"):
        shout("   ")


def test_the_command_takes_the_rest_of_the_line(observer: RecordingObserver) -> None:
    registry = ToolFactory([ShoutTool()], observer=observer).get_command_registry()
    assert registry.dispatch("/shout it's   on fire, really") == "IT'S   ON FIRE, REALLY!"
    assert registry.dispatch("/shout") == "Command 'shout' failed: missing required argument 'text'"
    (descriptor,) = registry.descriptors()
    assert descriptor.tool_card == "ShoutTool" and descriptor.args[0].rest_of_line


def test_the_system_prompt_carries_the_configured_rule(observer: RecordingObserver) -> None:
    factory = ToolFactory([ShoutTool(rules=ShoutRules(rule="Never shout."))], observer=observer)
    assert [prompt() for prompt in factory.get_system_prompts()] == ["Never shout."]


def test_the_shout_log_is_delivered_as_context_updates(observer: RecordingObserver) -> None:
    factory = ToolFactory([ShoutTool(log=ShoutLog(recent=2))], observer=observer)
    updater = factory.get_context_updater()
    assert updater.compose_update([]) == (
        "**Context update 1** — current state.\n\nYou have not shouted yet."
    )
    (shout,) = factory.get_tools()
    shout("one")
    shout("two")
    assert updater.compose_update([_user_text("**Context update 1**")]) == (
        "**Context update 2** — state has changed since the last update.\n\n"
        "2 new shout(s) since last update; 2 in total."
    )


def test_capabilities_can_be_switched_off_one_by_one(observer: RecordingObserver) -> None:
    factory = ToolFactory([ShoutTool(shout=False, rules=False, log=False)], observer=observer)
    assert factory.get_tools() == []
    assert factory.get_system_prompts() == []
    assert factory.get_context_states() == []
    assert len(factory.get_command_registry()) == 0


def test_a_pydantic_ai_agent_can_call_the_wrapped_tool(observer: RecordingObserver) -> None:
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            part
            for message in messages
            for part in getattr(message, "parts", [])
            if isinstance(part, ToolReturnPart)
        ]
        if not returns:
            assert [tool.name for tool in info.function_tools] == ["shout"]
            return ModelResponse(parts=[ToolCallPart("shout", {"text": "hello"})])
        return ModelResponse(parts=[TextPart(f"done: {returns[0].content}")])

    factory = ToolFactory([ShoutTool()], observer=observer, retry_exception=ModelRetry)
    agent = Agent(FunctionModel(script), tools=factory.get_tools())
    # Not run_sync: pydantic-ai would create the thread's event loop and never close it,
    # and its self-pipe socket would warn in whichever later test the GC frees it.
    assert asyncio.run(agent.run("go")).output == "done: HELLO!"


def _user_text(text: str) -> ModelRequest:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    return ModelRequest(parts=[UserPromptPart(content=text)])


@pytest.mark.parametrize(
    "document",
    [
        Path(__file__).resolve().parents[1] / "README.md",
        Path(__file__).resolve().parents[3] / "docs" / "writing-plugins.md",
    ],
    ids=["README", "tutorial"],
)
def test_the_documented_team_file_snippets_are_valid(hello: PluginInfo, document: Path) -> None:
    snippets = re.findall(r"```yaml\n(.*?)```", document.read_text(encoding="utf-8"), re.S)
    # Team cards and scripts are run by test_tutorial.py; here, the tools: snippets.
    tools = [data["tools"] for data in map(yaml.safe_load, snippets) if "tools" in data]
    assert tools
    for items in tools:
        cards = [ToolCard.model_validate(item) for item in items]
        assert all(isinstance(card, ShoutTool) for card in cards)
