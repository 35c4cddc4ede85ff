"""The team budget's counter: limits, charges, warnings, questions, changes, replay."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import ValidationError

from akgentic.llm.budget_events import (
    BudgetCharged,
    BudgetExhausted,
    BudgetStopped,
    BudgetWarned,
)
from akgentic.llm.team_budget import BudgetLimits, TeamBudget, parse_limit_changes
from akgentic.testing.waiting import wait_until


def blocked(budget: TeamBudget) -> str | None:
    """``budget.blocked`` read afresh (mypy would keep an earlier narrowing of it)."""
    return budget.blocked


def charge(member: str = "@A", **fields: float) -> BudgetCharged:
    return BudgetCharged(member=member, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"usd": 0}, "usd"),
        ({"usd": -1.5}, "usd"),
        ({"requests": 1.5}, "requests"),
        ({"requests": "10"}, "requests"),
        ({"usd": float("inf")}, "usd"),
        ({"requests": 10, "warn_at": 1.0}, "warn_at"),
        ({"requests": 10, "dollars": 3}, "dollars"),
        ({}, "set at least one limit"),
        ({"requests": 10, "hire_floor_usd": 1}, "hire_floor_usd needs a usd limit"),
        ({"usd": 1, "hire_floor_usd": 2}, "must be below usd"),
    ],
)
def test_a_malformed_block_is_refused(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        BudgetLimits.model_validate(data)
    assert message in str(caught.value)


def test_charges_add_up_per_team_and_per_member() -> None:
    budget = TeamBudget(BudgetLimits(requests=10, usd=1.0))
    budget.charge(charge("@A", input_tokens=100, output_tokens=10, usd=0.1, tool_calls=2))
    budget.charge(charge("@B", input_tokens=50, seconds=1.5))
    spent = budget.spent()
    assert (spent.requests, spent.input_tokens, spent.output_tokens) == (2, 150, 10)
    assert (spent.tool_calls, spent.usd, spent.wall_time_s) == (2, 0.1, 1.5)
    assert budget.by_member()["@B"].input_tokens == 50
    assert blocked(budget) is None


def test_the_warning_comes_once_per_crossing() -> None:
    budget = TeamBudget(BudgetLimits(requests=10))
    warnings = [budget.charge(charge()) for _ in range(9)]
    assert [w for w in warnings if w is not None] == [
        BudgetWarned(limit="requests", used=8, cap=10, threshold=0.8)
    ]
    assert warnings[7] is not None  # the 8th of 10 requests
    budget.change({"requests": 100}, "@Human")
    assert not budget.warned  # back under the threshold: the next crossing warns again
    more = [budget.charge(charge()) for _ in range(80)]
    assert len([w for w in more if w is not None]) == 1


def test_exhaustion_blocks_and_is_asked_about_once() -> None:
    budget = TeamBudget(BudgetLimits(output_tokens=100))
    budget.charge(charge(output_tokens=99))
    assert blocked(budget) is None
    assert budget.claim_question("@A") is None
    budget.charge(charge(output_tokens=5))
    assert blocked(budget) == "output_tokens"
    asked = budget.claim_question("@A")
    assert asked == BudgetExhausted(limit="output_tokens", used=104, cap=100, member="@A")
    assert budget.claim_question("@B") is None
    budget.asked("q1")
    changed = budget.change({"output_tokens": 200}, "@Human")
    assert changed.question_id == "q1"
    assert changed.output_tokens == 200
    assert blocked(budget) is None
    assert budget.question is None


def test_stop_blocks_until_a_change() -> None:
    budget = TeamBudget(BudgetLimits(requests=1))
    budget.charge(charge())
    budget.asked("q")
    stopped = budget.stop("@Human")
    assert stopped == BudgetStopped(by="@Human", question_id="q")
    assert blocked(budget) == "stopped"
    assert budget.claim_question("@A") is None
    budget.change({"requests": 5}, "@Human")
    assert blocked(budget) is None


def test_lowering_below_spent_blocks_at_once() -> None:
    budget = TeamBudget(BudgetLimits(usd=1.0))
    budget.charge(charge(usd=0.3))
    budget.change({"usd": 0.2}, "@Human")
    assert blocked(budget) == "usd"
    assert budget.exhausted() == ("usd", 0.3, 0.2)


def test_a_change_that_makes_the_block_invalid_is_refused() -> None:
    budget = TeamBudget(BudgetLimits(usd=1.0, hire_floor_usd=0.5))
    with pytest.raises(ValueError, match="hire_floor_usd"):
        budget.change({"usd": 0.4}, "@Human")
    with pytest.raises(ValueError, match="set at least one limit"):
        budget.change({"usd": None}, "@Human")
    assert budget.limits.usd == 1.0


def test_replaying_the_events_gives_the_same_budget() -> None:
    limits = BudgetLimits(requests=4, usd=2.0)
    live = TeamBudget(limits)
    log: list[object] = []
    for index in range(5):
        event = charge(f"@M{index % 2}", usd=0.1, seconds=0.5)
        warned = live.charge(event)
        log += [event] + ([warned] if warned else [])
    exhausted = live.claim_question("@M0")
    assert exhausted is not None
    live.asked("q7")
    log.append(BudgetExhausted(**{**exhausted.__dict__, "question_id": "q7"}))
    rebuilt = TeamBudget.rebuild(limits, log)
    assert rebuilt.status() == live.status()
    assert rebuilt.question == "q7"
    changed = live.change({"requests": 10}, "@Human")
    rebuilt.apply(changed)
    assert rebuilt.status() == live.status()
    assert blocked(rebuilt) is None


def test_rebuild_skips_other_messages_and_unwraps_event_messages() -> None:
    class Wrapped:
        def __init__(self, event: object) -> None:
            self.event = event

    log = [object(), Wrapped(charge(requests=3)), Wrapped("not a budget event")]
    assert TeamBudget.rebuild(BudgetLimits(requests=3), log).blocked == "requests"


def test_hiring_floor_by_fraction_and_by_dollars() -> None:
    budget = TeamBudget(BudgetLimits(requests=10, usd=1.0, hire_floor=0.5, hire_floor_usd=0.2))
    budget.charge(charge(requests=5, usd=0.1))
    assert budget.hire_refusal() is None  # exactly half left
    budget.charge(charge(requests=0, usd=0.75))
    refusal = budget.hire_refusal()
    assert refusal is not None and "below its hiring floor of $0.2000" in refusal
    other = TeamBudget(BudgetLimits(requests=10, hire_floor=0.5))
    other.charge(charge(requests=6))
    refusal = other.hire_refusal()
    assert refusal is not None and "40% of its requests left" in refusal


def test_parse_limit_changes() -> None:
    limits = BudgetLimits(requests=10, usd=1.0)
    assert parse_limit_changes(["usd=2.5", "requests=+5"], limits, raising=True) == {
        "usd": 2.5,
        "requests": 15,
    }
    assert parse_limit_changes(["tool_calls=none"], limits, raising=False) == {"tool_calls": None}
    for words, problem in [
        (["usd=0.5"], "does not raise"),
        (["dollars=5"], "limit name"),
        (["usd"], "limit name"),
        (["requests=2.5"], "whole number"),
        (["usd=-1"], "must be a number > 0"),
        (["usd=abc"], "not a number"),
        ([], "name at least one limit"),
    ]:
        with pytest.raises(ValueError, match=problem):
            parse_limit_changes(words, limits, raising=True)
    assert parse_limit_changes(["usd=0.5"], limits, raising=False) == {"usd": 0.5}


def test_a_waiter_wakes_on_a_change_from_another_thread() -> None:
    budget = TeamBudget(BudgetLimits(requests=1))
    budget.charge(charge())
    woke: list[str | None] = []

    async def wait() -> None:
        seen = budget.generation
        # A long timeout: only the change can end this wait in time for the join below.
        await budget.wait(seen, timeout=120)
        woke.append(blocked(budget))

    thread = threading.Thread(target=lambda: asyncio.run(wait()))
    thread.start()
    wait_until(lambda: budget._waiters, timeout=30)  # registered before the change
    budget.change({"requests": 2}, "@Human")
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert woke == [None]
