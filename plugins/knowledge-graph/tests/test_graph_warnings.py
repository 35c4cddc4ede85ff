"""A later graph card with other actor settings is warned, and the first settings win."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from akgentic_knowledge_graph import KnowledgeGraphTool, SearchQuery

from akgentic.tool import ToolFactory


def _wire(team: Any, card: KnowledgeGraphTool, name: str) -> dict[str, Any]:
    ToolFactory([card], observer=team.observer(name))
    return {tool.__name__: tool for tool in card.get_tools()}


def test_a_later_card_with_other_settings_is_warned_and_the_first_settings_win(
    team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    first = _wire(team, KnowledgeGraphTool(vector_store=False), "@A")
    with caplog.at_level(logging.WARNING):
        later = _wire(
            team, KnowledgeGraphTool(vector_store=False, search_top_k=25, hybrid_alpha=0.5), "@B"
        )
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "#KnowledgeGraphTool" in warned[0]
    assert "search_top_k" in warned[0] and "hybrid_alpha" in warned[0]
    assert "search_score_threshold" not in warned[0]
    entities = [
        {"name": f"E{i}", "entity_type": "thing", "description": f"deploy {i}"} for i in range(15)
    ]
    first["update_graph"]({"create_entities": entities})
    found = later["search_graph"](SearchQuery(query="deploy", mode="keyword"))
    assert found.count("[entity]") == 10


def test_the_same_settings_bind_without_a_warning(
    team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _wire(team, KnowledgeGraphTool(vector_store=False), "@A")
    with caplog.at_level(logging.WARNING):
        _wire(team, KnowledgeGraphTool(vector_store=False), "@B")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
