"""KnowledgeGraphTool runs the shared ToolCardContract, as a member of a real team."""

from __future__ import annotations

import pytest
from akgentic_knowledge_graph import GetGraph, KnowledgeGraphTool, SearchGraph

from akgentic.testing.tool_team import TeamToolCardContract
from akgentic.tool import ToolCard


class TestKnowledgeGraphToolContract(TeamToolCardContract):
    """KnowledgeGraphTool, registered as ``knowledge_graph`` by this distribution's plugin."""

    card_name = "knowledge_graph"
    plugin = "akgentic_knowledge_graph.plugin"
    tool_arguments = {
        "update_graph": {"update": {"create_entities": [{"name": "x", "entity_type": "t"}]}},
        "search_graph": {"query": {"query": "x", "mode": "keyword"}},
    }

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
