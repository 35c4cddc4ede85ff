"""docs/cards/*.md: every YAML recipe loads, every Python block runs, with its plugin installed."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from akgentic.agent import AgentConfig
from akgentic.tool import ToolCard

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cards"
CARDS = {
    "search": "akgentic_search",
    "mcp": "akgentic_mcp",
    "metadata": "akgentic_metadata",
    "notification": "akgentic_notification",
    "skill": "akgentic_skill",
    "model": "akgentic_model",
    "planning": "akgentic_planning",
    "knowledge_graph": "akgentic_knowledge_graph",
}


def _blocks(name: str, language: str) -> list[str]:
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def _plugin(name: str) -> ModuleType:
    module: ModuleType = pytest.importorskip(CARDS[name])
    return module


@pytest.mark.parametrize("name", sorted(CARDS))
def test_every_yaml_recipe_of_the_page_loads_into_its_card(name: str) -> None:
    package = _plugin(name)
    recipes = _blocks(name, "yaml")
    assert recipes, f"docs/cards/{name}.md has no YAML recipe"
    for recipe in recipes:
        data: dict[str, Any] = yaml.safe_load(recipe)
        cards = [ToolCard.model_validate(item) for item in data["tools"]]
        assert all(type(card).__module__.startswith(package.__name__) for card in cards)
        assert all(item["card"] == name for item in data["tools"])
        if "model_cfg" in data:
            AgentConfig.model_validate({"name": "@Doc", "role": "Doc", **data})


@pytest.mark.parametrize("name", sorted(CARDS))
def test_every_python_block_of_the_page_runs(name: str) -> None:
    _plugin(name)
    namespace: dict[str, Any] = {"__name__": f"card_doc_{name}"}
    for block in _blocks(name, "python"):
        exec(compile(block, str(DOCS / f"{name}.md"), "exec", dont_inherit=True), namespace)


def test_every_card_page_is_linked_from_the_index() -> None:
    index = (DOCS.parent / "index.md").read_text(encoding="utf-8")
    for name in CARDS:
        assert f"(cards/{name}.md)" in index
    assert "(workspace.md)" in index
    assert "(tool-quickstart.md)" in index


def test_every_card_page_is_listed_here_and_linked_from_the_readme() -> None:
    assert {page.stem for page in DOCS.glob("*.md")} == set(CARDS)
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    for name in CARDS:
        assert f"(docs/cards/{name}.md)" in readme
    assert "(docs/workspace.md)" in readme
    assert "(docs/tool-quickstart.md)" in readme


def test_the_seed_import_paths_of_the_issue_resolve_to_the_plugin_classes() -> None:
    for name in CARDS:
        _plugin(name)
    from akgentic.tool import ModelTool, NotificationTool, SkillTool

    mcp = importlib.import_module("akgentic.tool.mcp")
    search = importlib.import_module("akgentic.tool.search")
    skill = importlib.import_module("akgentic.tool.skill")
    metadata = importlib.import_module("akgentic.tool.metadata")
    model = importlib.import_module("akgentic.tool.model")
    assert {search.SearchTool.__name__, search.WebCrawl.__name__, search.WebFetch.__name__} == {
        "SearchTool",
        "WebCrawl",
        "WebFetch",
    }
    assert skill.SkillEntry is importlib.import_module("akgentic_skill").SkillEntry
    assert skill.Skills.__module__ == "akgentic_skill.card"
    assert metadata.MetadataTool.__module__ == "akgentic_metadata.card"
    assert metadata.RenderMetadata.__module__ == "akgentic_metadata.card"
    assert mcp.MCPTool.__module__ == "akgentic_mcp.card"
    assert {mcp.MCPHTTPConnectionConfig.__name__, mcp.MCPStdioConnectionConfig.__name__} == {
        "MCPHTTPConnectionConfig",
        "MCPStdioConnectionConfig",
    }
    assert model.SwitchModel is importlib.import_module("akgentic_model").SwitchModel
    assert NotificationTool.__module__ == "akgentic_notification.card"
    assert SkillTool is skill.SkillTool
    assert ModelTool is model.ModelTool
