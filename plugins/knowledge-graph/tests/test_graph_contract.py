"""KnowledgeGraphTool runs the shared ToolCardContract, as a member of a real team."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from akgentic_knowledge_graph import GetGraph, KnowledgeGraphTool, SearchGraph

from akgentic.core import ActorSystem, BaseConfig, Orchestrator
from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard, ToolObserver

from .conftest import TeamObserver


class TestKnowledgeGraphToolContract(ToolCardContract):
    """KnowledgeGraphTool, registered as ``knowledge_graph`` by this distribution's plugin."""

    card_name = "knowledge_graph"
    plugin = "akgentic_knowledge_graph.plugin"
    tool_arguments = {
        "update_graph": {"update": {"create_entities": [{"name": "x", "entity_type": "t"}]}},
        "search_graph": {"query": {"query": "x", "mode": "keyword"}},
    }

    @pytest.fixture(autouse=True)
    def _system(self) -> Iterator[None]:
        system = ActorSystem()
        self._orchestrator: Any = system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        yield
        system.shutdown(timeout=10)

    def make_observer(self) -> ToolObserver:
        return TeamObserver(self._orchestrator)

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            plain: ToolCard = KnowledgeGraphTool(vector_store=False)
            return plain
        configured: ToolCard = KnowledgeGraphTool(
            vector_store=False,
            search_top_k=5,
            get_graph=GetGraph(prompt_include_roots=False),
            search=SearchGraph(instructions="Prefer {keyword} mode."),
        )
        return configured
