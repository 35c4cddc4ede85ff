"""Restore from the log alone: a board with no checkpoint is rebuilt from its events."""

from __future__ import annotations

from typing import Any

from akgentic_planning import (
    PLANNING_ACTOR_NAME,
    PlanConfig,
    PlanManagerState,
    TaskCreate,
    TaskUpdate,
    UpdatePlan,
)
from akgentic_planning.actor import PlanActor

from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.proxy import ProxyWrapper
from akgentic.testing.waiting import wait_until

from .test_planning_board import Events


def test_a_board_without_a_checkpoint_is_rebuilt_from_its_state_events(team: Any) -> None:
    events = Events()
    team.proxy.subscribe(events)
    config = PlanConfig(name=PLANNING_ACTOR_NAME, role="ToolActor")
    board = ProxyWrapper(team.proxy.getChildrenOrCreate(PlanActor, config=config), timeout=30)
    board.update_planning(
        UpdatePlan(create_tasks=[TaskCreate(id=i, description=f"t{i}") for i in range(5)]), "@A"
    )
    board.update_planning(
        UpdatePlan(update_tasks=[TaskUpdate(id=2, owner="@B")], delete_tasks=[0]), "@A"
    )
    wait_until(lambda: len(events.seen) == 2, timeout=30)
    expected = board.get_tasks()

    fresh_config = PlanConfig(name="#PlanningReplay", role="ToolActor")
    fresh = ProxyWrapper(team.proxy.createActor(PlanActor, config=fresh_config), timeout=30)
    fresh.init_state(PlanManagerState())  # a checkpoint from before any change
    fresh.init_llm_context([EventMessage(event=e) for e in events.seen])
    assert fresh.get_tasks() == expected
    assert fresh.state.state_event_seq == 2
    fresh.update_planning(UpdatePlan(delete_tasks=[1]), "@A")
    assert fresh.state.state_event_seq == 3
