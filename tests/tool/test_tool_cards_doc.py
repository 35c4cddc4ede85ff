"""docs/tool-cards.md: its Python blocks run, its results and its YAML are what it says."""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from akgentic.plugins import PluginInfo
from akgentic.tool import ToolCard, ToolFactory
from akgentic.tool.commands import CommandRegistry
from akgentic.tool.testing import RecordingObserver

DOC = Path(__file__).resolve().parents[2] / "docs" / "tool-cards.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def doc() -> Iterator[dict[str, object]]:
    # A real module, so that dumped cards name an importable class path.
    module = ModuleType("tool_cards_doc")
    sys.modules[module.__name__] = module
    try:
        for block in _blocks("python"):
            exec(compile(block, str(DOC), "exec", dont_inherit=True), module.__dict__)
        yield module.__dict__
    finally:
        del sys.modules[module.__name__]


def _results() -> list[tuple[str, str]]:
    [table] = _blocks("text")
    pairs = [line.split("=>", 1) for line in table.splitlines() if "=>" in line]
    return [(name.strip(), value.strip().replace("\\n", "\n")) for name, value in pairs]


@pytest.mark.parametrize(("expression", "expected"), _results())
def test_the_documented_results_are_what_the_code_produces(
    doc: dict[str, object], expression: str, expected: str
) -> None:
    assert str(eval(expression, doc)) == expected


def test_the_documented_card_serves_each_channel(doc: dict[str, object]) -> None:
    card_class = doc["TallyTool"]
    assert isinstance(card_class, type) and issubclass(card_class, ToolCard)
    observer = RecordingObserver()
    factory = ToolFactory([card_class()], observer=observer)
    assert [tool.__name__ for tool in factory.get_tools()] == ["tally"]
    assert [p() for p in factory.get_system_prompts()] == [
        "Count each item once, when you first see it."
    ]
    assert [p.__name__ for p in factory.get_context_states()] == ["tally_board"]
    assert factory.get_command_registry().names() == ["tally"]


def test_the_narrowing_example_publishes_through_the_observer(doc: dict[str, object]) -> None:
    card_class = doc["AuditedTallyTool"]
    assert isinstance(card_class, type) and issubclass(card_class, ToolCard)
    observer = RecordingObserver()
    ToolFactory([card_class()], observer=observer)
    assert len(observer.events) == 1


def test_the_documented_yaml_validates_through_the_documented_hook(
    doc: dict[str, object], register_plugin: Callable[..., PluginInfo]
) -> None:
    module = ModuleType("tally_doc_plugin")
    module.akgentic_tool_cards = doc["akgentic_tool_cards"]  # type: ignore[attr-defined]
    register_plugin(module, "tally")
    [document] = _blocks("yaml")
    (card,) = (ToolCard.model_validate(item) for item in yaml.safe_load(document)["tools"])
    assert type(card) is doc["TallyTool"]
    assert card.model_dump()["card"] == "tally"
    assert ToolCard.model_validate(card.model_dump()) == card


def test_the_deferred_example_defines_a_cache_and_a_worker(doc: dict[str, object]) -> None:
    from akgentic.tool.core.deferred import DeferredResultActor, DeferredWorker

    cache, worker = doc["SummaryCache"], doc["SummaryWorker"]
    assert isinstance(cache, type) and issubclass(cache, DeferredResultActor)
    assert isinstance(worker, type) and issubclass(worker, DeferredWorker)


def test_the_documented_capability_card_serves_each_capability_once(
    doc: dict[str, object],
) -> None:
    factory = doc["notes_factory"]
    assert isinstance(factory, ToolFactory)
    assert [tool.__name__ for tool in factory.get_tools()] == ["note", "list_notes"]
    assert factory.get_command_registry().names() == ["note", "list_notes"]
    note_tool = doc["note_tool"]
    assert callable(note_tool)
    assert list(inspect.signature(note_tool).parameters) == ["text", "tags"]
    registry = doc["notes_registry"]
    assert isinstance(registry, CommandRegistry)
    assert list(inspect.signature(registry.callable("note")).parameters) == ["text"]
    assert registry.dispatch("/list_notes") == (
        "Ship on Friday #release\ncall the printer people, again"
    )
