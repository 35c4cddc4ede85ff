"""Many members charging one budget at once overshoot it by at most one request each."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from akgentic.llm.budget_events import BudgetCharged, BudgetExhausted
from akgentic.llm.scripted_server import ScriptedLLMServer, ScriptStep

HAMMERS = 4
CAP = 20


def test_parallel_members_never_overshoot_by_more_than_one_request_each(
    make_team: Callable[..., Any], llm: ScriptedLLMServer
) -> None:
    # Each member's first request is answered only once all of them are in flight: on a
    # loaded machine one member could otherwise spend the whole budget before the last
    # one asked (the overshoot bound is about requests in flight together).
    together = threading.Barrier(HAMMERS, timeout=60)
    rules = llm.fallback
    assert callable(rules)

    def first_requests_together(body: dict[str, Any]) -> ScriptStep | str:
        messages = body.get("messages") or []
        first = not any(m.get("role") == "tool" for m in messages)
        if first and messages and "hammer" in json.dumps(messages[-1]):
            together.wait()
        step: ScriptStep | str = rules(body)
        return step

    llm.fallback = first_requests_together
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
