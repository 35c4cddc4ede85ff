"""Search (keyword, vector, hybrid) and the context state the model reads."""

from __future__ import annotations

from typing import Any

import pytest
from akgentic_planning import (
    SEMANTIC_DISABLED,
    GetPlanning,
    PlanningState,
    PlanningTool,
    TaskCreate,
    TaskUpdate,
    UpdatePlan,
)
from akgentic_planning.state import MAX_FULL_ROWS, TaskRow

from akgentic.tool import RetriableError, ToolFactory
from akgentic.vector import VectorStoreParam

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)


def _wire(team: Any, name: str, card: PlanningTool) -> tuple[dict[str, Any], PlanningTool]:
    ToolFactory([card], observer=team.observer(name))
    return {tool.__name__: tool for tool in card.get_tools()}, card


BOARD = UpdatePlan(
    create_tasks=[
        TaskCreate(id=1, description="deploy the web service", owner="@Ops"),
        TaskCreate(id=2, description="write release notes", owner=""),
        TaskCreate(id=3, description="deploy the database", owner="@Ops", status="started"),
    ]
)


def test_without_a_query_every_filtered_task_is_listed_in_board_order(team: Any) -> None:
    tools, _card = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](BOARD)
    assert tools["search_planning"](owner="@Ops") == [
        "Task 1: deploy the web service [pending] (Owner: @Ops, Creator: @A)",
        "Task 3: deploy the database [started] (Owner: @Ops, Creator: @A)",
    ]
    assert tools["search_planning"]("   ", owner="") == [
        "Task 2: write release notes [pending] (Owner: unassigned, Creator: @A)"
    ]


def test_keyword_search_needs_every_word_and_degrades_without_a_store(team: Any) -> None:
    tools, _card = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](BOARD)
    lines = tools["search_planning"]("deploy service")
    assert lines == [
        "Task 1: deploy the web service [pending] (Owner: @Ops, Creator: @A) (keyword match)"
    ]
    assert tools["search_planning"]("deploy", mode="vector") == [SEMANTIC_DISABLED]
    assert tools["search_planning"]("deploy", status="started") == [
        "Task 3: deploy the database [started] (Owner: @Ops, Creator: @A) (keyword match)"
    ]


def test_hybrid_search_with_the_hashing_embedder_ranks_both_sides(team: Any) -> None:
    tools, _card = _wire(team, "@A", PlanningTool(vector_store=HASHING, search_score_threshold=0.0))
    tools["update_planning"](BOARD)
    semantic = tools["search_planning"]("deploy the web service", mode="vector", top_k=1)
    assert len(semantic) == 1 and semantic[0].startswith("Task 1: ")
    assert " (semantic: " in semantic[0]
    hybrid = tools["search_planning"]("deploy")
    assert hybrid[0].startswith("Task ") and " (hybrid: " in hybrid[0]
    assert {line.split(":")[0] for line in hybrid} >= {"Task 1", "Task 3"}
    # A changed description replaces the task's vector.
    tools["update_planning"](
        UpdatePlan(update_tasks=[TaskUpdate(id=2, description="deploy the mobile app")])
    )
    found = tools["search_planning"]("mobile app", mode="vector", top_k=1)
    assert found[0].startswith("Task 2: deploy the mobile app")


def test_search_bounds_are_checked_and_large_top_k_is_clamped(team: Any) -> None:
    tools, _card = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](BOARD)
    with pytest.raises(RetriableError, match="top_k must be at least 1"):
        tools["search_planning"]("deploy", top_k=0)
    with pytest.raises(RetriableError, match="score_threshold must be between 0 and 1"):
        tools["search_planning"]("deploy", score_threshold=1.5)
    assert len(tools["search_planning"]("deploy", top_k=10_000)) == 2


def test_the_search_command_reads_options_and_the_rest_of_the_line(team: Any) -> None:
    card = PlanningTool(vector_store=False)
    ToolFactory([card], observer=team.observer("@A"))
    {t.__name__: t for t in card.get_tools()}["update_planning"](BOARD)
    factory = ToolFactory([card])
    commands = factory.get_commands()
    search = {c.__name__: c for c in commands.values()}["search_planning"]
    assert search(mode="keyword", query="release notes").startswith("Task 2: ")
    assert search(query="nothing like it") == "No tasks found."
    registry = factory.get_command_registry()
    assert sorted(registry.names()) == ["get_planning_task", "planning_summary", "search_planning"]


def test_the_filtered_view_hides_unassigned_tasks_i_created(team: Any) -> None:
    tools, card = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](
        UpdatePlan(
            create_tasks=[
                TaskCreate(id=1, description="mine to hand out", owner=""),
                TaskCreate(id=2, description="given to Bob", owner="@Bob"),
            ]
        )
    )
    (provider,) = card.get_context_states()
    state = provider()
    assert isinstance(state, PlanningState)
    assert state.render_full() == "\n".join(
        [
            "**Team planning:** 2 task(s) total",
            "Owners: @Bob: 1 | unassigned: 1",
            "",
            "**Your tasks** (owner or creator: @A):",
            "- ID 2 [pending] given to Bob (Owner: @Bob, Creator: @A)",
            "",
            "Use get_planning_task(id) for exact ID lookup or search_planning(...) to filter "
            "tasks.",
        ]
    )


def test_an_unfiltered_view_lists_every_task_and_an_empty_board_says_so(team: Any) -> None:
    unfiltered = PlanningTool(vector_store=False, get_planning=GetPlanning(filter_by_agent=False))
    tools, card = _wire(team, "@A", unfiltered)
    (provider,) = card.get_context_states()
    empty = provider()
    assert empty is not None and empty.render_full() == "No current team planning."
    tools["update_planning"](BOARD)
    full = provider()
    assert full is not None
    text = full.render_full()
    assert "**All tasks:**" in text and text.count("\n- ID ") == 3


def test_the_delta_after_one_change_names_only_that_change(team: Any) -> None:
    tools, card = _wire(team, "@Ops", PlanningTool(vector_store=False))
    tools["update_planning"](BOARD)
    (provider,) = card.get_context_states()
    before = provider()
    assert before is not None and before.render_delta(before) is None
    tools["update_planning"](
        UpdatePlan(
            update_tasks=[TaskUpdate(id=1, status="completed", output="shipped")],
            delete_tasks=[3],
            create_tasks=[TaskCreate(id=4, description="monitor", owner="@Ops")],
        )
    )
    after = provider()
    assert after is not None
    assert after.render_delta(before) == (
        # The total did not move (one created, one deleted), so it is not repeated.
        "ID 1 [pending] → [completed] (Owner: @Ops). ID 1 output: shipped. "
        "New: ID 4 [pending] monitor (Owner: @Ops, Creator: @Ops). "
        "Removed: ID 3 [started] deploy the database."
    )


def test_delta_parts_for_owner_description_and_cleared_output() -> None:
    row = TaskRow(id=1, status="started", description="a", owner="@A", creator="@C", output="x")
    before = PlanningState(total=1, owner_counts={"@A": 1}, tasks=[row], agent_name="@C")
    moved = row.model_copy(update={"owner": "", "description": "b", "output": ""})
    after = before.model_copy(update={"tasks": [moved], "owner_counts": {"unassigned": 1}})
    assert after.render_delta(before) == (
        "ID 1 owner: @A → unassigned. ID 1 description: b. ID 1 output cleared."
    )


def test_a_full_rendering_stays_bounded_on_a_large_board() -> None:
    rows = [TaskRow(id=i, status="pending", description="d" * 300, owner="@A") for i in range(1000)]
    state = PlanningState(total=1000, owner_counts={"@A": 1000}, tasks=rows, agent_name="@A")
    text = state.render_full()
    assert text.count("\n- ID ") == MAX_FULL_ROWS
    assert f"… and {1000 - MAX_FULL_ROWS} more task(s) not listed here." in text
    assert len(text) < (MAX_FULL_ROWS + 10) * 400
