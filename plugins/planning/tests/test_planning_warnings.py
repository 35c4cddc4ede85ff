"""The WARNINGs the spec asks of planning: later settings that lose, rows that name no task."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from akgentic_planning import PlanningTool, TaskCreate, UpdatePlan

from akgentic.core.proxy import ProxyWrapper
from akgentic.tool import ToolFactory
from akgentic.vector import VectorEntry, VectorStoreParam, build_embedder

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)


def _wire(team: Any, name: str, card: PlanningTool) -> dict[str, Any]:
    ToolFactory([card], observer=team.observer(name))
    return {tool.__name__: tool for tool in card.get_tools()}


def test_a_later_card_with_other_settings_is_warned_and_the_first_settings_win(
    team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    first = _wire(team, "@A", PlanningTool(vector_store=False))
    with caplog.at_level(logging.WARNING):
        later = _wire(team, "@B", PlanningTool(vector_store=False, search_top_k=25))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "#PlanningTool" in warned[0] and "search_top_k" in warned[0]
    assert "hybrid_alpha" not in warned[0]
    first["update_planning"](
        UpdatePlan(create_tasks=[TaskCreate(id=i, description=f"deploy {i}") for i in range(15)])
    )
    assert len(later["search_planning"]("deploy", mode="keyword")) == 10


def test_the_same_settings_bind_without_a_warning(
    team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _wire(team, "@A", PlanningTool(vector_store=False, search_top_k=25))
    with caplog.at_level(logging.WARNING):
        _wire(team, "@B", PlanningTool(vector_store=False, search_top_k=25))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_vector_row_whose_ref_id_is_not_a_task_id_is_skipped_with_a_warning(
    team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=HASHING, search_score_threshold=0.0))
    tools["update_planning"](
        UpdatePlan(create_tasks=[TaskCreate(id=1, description="deploy the web service")])
    )
    store = ProxyWrapper(team.member("#VectorStore"), timeout=30)
    text = "deploy the web service"
    (vector,) = build_embedder(HASHING).embed([text])
    store.add(
        "planning", [VectorEntry(ref_type="task", ref_id="not-a-task", text=text, vector=vector)]
    )
    with caplog.at_level(logging.WARNING):
        lines = tools["search_planning"](text, mode="vector")
    assert [line.split(":")[0] for line in lines] == ["Task 1"]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'not-a-task'" in m and "not a task id" in m for m in warned), warned
