"""Many members charging one budget at once overshoot it by at most one request each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from akgentic.llm.budget_events import BudgetCharged, BudgetExhausted
from akgentic.llm.scripted_server import ScriptedLLMServer

HAMMERS = 4
CAP = 20


def test_parallel_members_never_overshoot_by_more_than_one_request_each(
    make_team: Callable[..., Any], llm: ScriptedLLMServer
) -> None:
    team = make_team(f"requests: {CAP}", hammers=HAMMERS)
    names = [f"@Hammer_{i}" for i in range(HAMMERS)]
    for name in names:
        team.say("hammer", to=name)  # each loops on a tool, one request after another
    team.wait(lambda: team.questions())
    budget = team.budget()
    # Every request in flight when the budget ran out completes and is charged; then
    # every member waits before its next one.
    team.wait(lambda: sum(c.requests for c in team.events(BudgetCharged)) == llm.served)
    team.type_line("/budget stop")
    assert team.runtime.wait_idle(60)

    charged = team.events(BudgetCharged)
    total = sum(c.requests for c in charged)
    assert total == llm.served == budget.spent().requests
    assert CAP <= total <= CAP + HAMMERS - 1, f"{total} requests for a budget of {CAP}"
    assert {c.member for c in charged} == set(names), "the members did not work in parallel"
    assert budget.spent().tool_calls == total  # each reply called the tool once
    assert len(team.events(BudgetExhausted)) == 1
    served = llm.served
    team.say("hammer", to=names[0])  # stopped: nothing starts
    assert team.runtime.wait_idle(60)
    assert llm.served == served
