"""The board on a real ``#PlanningTool``: creates, updates, deletes, refusals and events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from akgentic_planning import (
    PLANNING_ACTOR_NAME,
    PlanningStateEvent,
    PlanningTool,
    Task,
    TaskCreate,
    TaskUpdate,
    UpdatePlan,
)

from akgentic.testing.tool_team import ToolStateRecorder
from akgentic.testing.waiting import wait_until
from akgentic.tool import RetriableError, ToolFactory
from akgentic.vector import VectorStoreParam

HASHING = VectorStoreParam(embedding_provider="hashing", embedding_model="hashing", dimension=256)


class Events(ToolStateRecorder[PlanningStateEvent]):
    """The ``PLANNING_ACTOR_NAME`` state events the orchestrator published, in order."""

    def __init__(self) -> None:
        super().__init__(PLANNING_ACTOR_NAME, PlanningStateEvent)


def _tools(card: PlanningTool) -> dict[str, Any]:
    return {tool.__name__: tool for tool in card.get_tools()}


def _wire(team: Any, name: str, card: PlanningTool) -> dict[str, Any]:
    ToolFactory([card], observer=team.observer(name))
    return _tools(card)


def _create(*specs: tuple[int, str, str]) -> UpdatePlan:
    return UpdatePlan(create_tasks=[TaskCreate(id=i, description=d, owner=o) for i, d, o in specs])


def test_creates_are_stamped_with_the_caller_and_found_by_id(team: Any) -> None:
    tools = _wire(team, "@Manager", PlanningTool(vector_store=False))
    assert tools["update_planning"](_create((1, "write the spec", ""), (2, "review", "@Bob"))) == (
        "Done"
    )
    task = tools["get_planning_task"](2)
    assert isinstance(task, Task)
    assert (task.description, task.owner, task.creator) == ("review", "@Bob", "@Manager")
    assert tools["get_planning_task"](7) == "No task with that ID."


def test_every_agent_of_the_team_shares_one_planning_actor(team: Any) -> None:
    first = _wire(team, "@A", PlanningTool(vector_store=False))
    second = _wire(team, "@B", PlanningTool(vector_store=False))
    first["update_planning"](_create((1, "shared", "@B")))
    assert second["get_planning_task"](1).creator == "@A"
    names = [m.name for m in team.proxy.get_team()]
    assert names.count(PLANNING_ACTOR_NAME) == 1


def test_a_duplicate_id_is_refused_and_the_rest_of_the_batch_applies(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](_create((1, "first", "")))
    with pytest.raises(RetriableError) as refused:
        tools["update_planning"](_create((1, "again", ""), (2, "new", ""), (2, "twice", "")))
    message = str(refused.value)
    assert message.startswith("Update errors: ")
    assert "Create error - task ID 1 already exists." in message
    assert "Create error - task ID 2 already exists." in message
    assert tools["get_planning_task"](1).description == "first"
    assert tools["get_planning_task"](2).description == "new"


def test_dependencies_must_name_tasks_on_the_board_or_in_the_batch(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    plan = UpdatePlan(
        create_tasks=[
            TaskCreate(id=1, description="base"),
            TaskCreate(id=2, description="uses 1", dependencies=[1]),
            TaskCreate(id=3, description="dangling", dependencies=[1, 42]),
            TaskCreate(id=4, description="itself", dependencies=[4]),
        ]
    )
    with pytest.raises(RetriableError) as refused:
        tools["update_planning"](plan)
    assert "Dependency error - task 3 depends on unknown task(s) [42]." in str(refused.value)
    assert "Dependency error - task 4 depends on unknown task(s) [4]." in str(refused.value)
    assert tools["get_planning_task"](2).dependencies == [1]
    assert tools["get_planning_task"](3) == "No task with that ID."


def test_an_update_naming_a_missing_task_is_refused_and_changes_nothing(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](_create((1, "only", "")))
    before = tools["get_planning_task"](1)
    with pytest.raises(RetriableError, match=r"Update error - no task with ID 99 found\."):
        tools["update_planning"](UpdatePlan(update_tasks=[TaskUpdate(id=99, status="started")]))
    assert tools["get_planning_task"](1) == before


def test_updates_apply_given_fields_refresh_the_time_and_cut_long_outputs(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](_create((1, "draft", "")))
    before = tools["get_planning_task"](1)
    change = TaskUpdate.model_validate({"id": 1, "status": "completed", "output": "y" * 400})
    assert tools["update_planning"](UpdatePlan(update_tasks=[change])) == "Done"
    after = tools["get_planning_task"](1)
    assert after.status == "completed" and after.description == "draft"
    assert after.output == "y" * 147 + "..."
    assert after.updated_at > before.updated_at


def test_deletes_remove_tasks_and_missing_ids_are_reported(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](_create((1, "a", ""), (2, "b", "")))
    with pytest.raises(RetriableError, match=r"Delete error - no task with ID 5 found\."):
        tools["update_planning"](UpdatePlan(delete_tasks=[1, 5]))
    assert tools["get_planning_task"](1) == "No task with that ID."
    assert tools["get_planning_task"](2).description == "b"


def test_hostile_batches_are_refused_whole_with_a_readable_message(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    hostile: list[dict[str, Any]] = [
        {"create_tasks": [{"id": 1, "description": "x" * 1_000_000}]},
        {"create_tasks": [{"id": i, "description": "t"} for i in range(10_000)]},
        {"create_tasks": [{"id": '1"; rm -rf /', "description": "quotes"}]},
        {"create_tasks": [{"id": "../../etc/passwd", "description": "path"}]},
        {"create_tasks": [{"id": 3, "description": "ok"}], "update_tasks": [{"id": 3, "x": 1}]},
    ]
    for payload in hostile:
        with pytest.raises(RetriableError) as refused:
            tools["update_planning"](payload)
        message = str(refused.value)
        assert message.startswith("Invalid update: ")
        assert len(message) < 600  # the 1 MB description is not echoed back
    # Nothing of any refused batch was applied.
    assert tools["search_planning"]() == []


def test_unicode_and_quotes_in_descriptions_and_owners_round_trip(team: Any) -> None:
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    text = "Ünïcødé «quotes» \"double\" 'single' ../../etc 🚀 Straße"
    plan = UpdatePlan(create_tasks=[TaskCreate(id=1, description=text, owner='@B"')])
    tools["update_planning"](plan)
    task = tools["get_planning_task"](1)
    assert (task.description, task.owner) == (text, '@B"')
    assert tools["search_planning"]("STRASSE", mode="keyword") == [
        f'Task 1: {text} [pending] (Owner: @B", Creator: @A) (keyword match)'
    ]


def test_state_events_list_real_changes_numbered_without_gaps(team: Any) -> None:
    events = Events()
    team.proxy.subscribe(events)
    tools = _wire(team, "@A", PlanningTool(vector_store=False))
    tools["update_planning"](_create((1, "a", ""), (2, "b", "")))
    tools["update_planning"](UpdatePlan(update_tasks=[TaskUpdate(id=1, status="pending")]))  # no-op
    with pytest.raises(RetriableError):
        tools["update_planning"](UpdatePlan(update_tasks=[TaskUpdate(id=9, status="started")]))
    tools["update_planning"](
        UpdatePlan(update_tasks=[TaskUpdate(id=1, owner="@B")], delete_tasks=[2])
    )
    wait_until(lambda: len(events.seen) >= 2, timeout=30)
    assert [e.seq for e in events.seen] == [1, 2]
    first, second = events.payloads()
    assert [t.id for t in first.tasks_added] == [1, 2] and not first.tasks_modified
    assert [t.owner for t in second.tasks_modified] == ["@B"]
    assert second.tasks_removed == [2] and not second.tasks_added
    # The payload survives the log's JSON form.
    dumped = json.loads(events.seen[1].model_dump_json())
    assert dumped["payload"]["tasks_removed"] == [2]


def test_an_actor_without_an_orchestrator_is_refused_at_wiring() -> None:
    from akgentic.testing.tool_card_contract import ContractObserver

    with pytest.raises(ValueError, match=r"PlanningTool requires access to the orchestrator\."):
        PlanningTool(vector_store=False).observer(ContractObserver())


def test_a_named_backend_without_its_environment_fails_before_any_actor(
    team: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_WEAVIATE_URL", raising=False)
    card = PlanningTool(vector_store=VectorStoreParam(backend="weaviate"))
    with pytest.raises(ValueError, match="AKGENTIC_WEAVIATE_URL"):
        card.observer(team.observer("@A"))
    names = [m.name for m in team.proxy.get_team()]
    assert PLANNING_ACTOR_NAME not in names and "#VectorStore" not in names
