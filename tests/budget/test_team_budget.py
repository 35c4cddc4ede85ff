"""The team budget end to end: real teams, a real store, the scripted model server.

Each test drives the team of ``conftest.py`` (``@Lead``, ``@Worker``, hireable
``Helper``; every model reply costs 100 input and 10 output tokens) under a budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from akgentic.llm.budget_events import (
    BudgetChanged,
    BudgetCharged,
    BudgetExhausted,
    BudgetStopped,
    BudgetWarned,
)
from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.llm.team_budget import TeamBudget

Team = Any
MakeTeam = Callable[..., Any]


def blocked(budget: TeamBudget) -> str | None:
    """``budget.blocked`` read afresh (mypy would keep an earlier narrowing of it)."""
    return budget.blocked


def _human_got(team: Team, needle: str) -> list[str]:
    return [content for _s, _t, content in team.said("@Human") if needle in content]


def test_a_team_that_runs_out_asks_the_human_waits_and_goes_on_after_a_raise(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    team = make_team("requests: 2")
    team.say("delegate")
    # @Lead asks @Worker (request 1), @Worker answers (request 2): the budget is used up,
    # so @Lead's next request waits and the human is asked.
    team.wait(lambda: team.questions())
    [question] = team.questions()
    assert "The team budget is used up: requests 2 of 2" in question["content"]
    [exhausted] = team.events(BudgetExhausted)
    assert exhausted.question_id == question["id"]
    assert exhausted.limit == "requests"
    assert llm.served == 2
    budget: TeamBudget = team.budget()
    assert blocked(budget) == "requests"
    assert not _human_got(team, "all done")

    # The console's answer to the question raises the budget: @Lead goes on where it was.
    team.answer(question["id"], "/budget raise requests=10")
    team.wait(lambda: _human_got(team, "all done: done"))
    assert blocked(budget) is None
    [changed] = team.events(BudgetChanged)
    assert changed.requests == 10
    assert changed.by == "@Human"
    assert changed.question_id == question["id"]
    assert team.questions() == []
    assert team.runtime.wait_idle(60)
    charged = team.events(BudgetCharged)
    assert sum(c.requests for c in charged) == llm.served == budget.spent().requests
    assert {c.member for c in charged} == {"@Lead", "@Worker"}
    assert budget.spent().input_tokens == 100 * llm.served
    # Asked once, however many requests waited.
    assert len(team.events(BudgetExhausted)) == 1


def test_a_raise_typed_in_the_cli_closes_the_question_and_the_lead_is_warned(
    make_team: MakeTeam,
) -> None:
    team = make_team("requests: 2")
    team.say("delegate")
    team.wait(lambda: team.questions())
    # The worker's request crossed 80%: the lead got a notification from it, once.
    warnings = [c for s, t, c in team.said("@Lead") if t == "notification" and "budget" in c]
    assert len(warnings) == 1
    assert "100% of its budget (requests: 2 of 2)" in warnings[0]
    assert len(team.events(BudgetWarned)) == 1
    assert _human_got(team, "of its budget")

    team.type_line("/budget raise requests=+8")  # to the lead, which is the one waiting
    team.wait(lambda: _human_got(team, "all done"))
    assert team.budget().limits.requests == 10
    assert team.questions() == []
    replies = [c for s, t, c in team.said("@Human") if c.startswith("The budget was changed")]
    assert len(replies) == 1


def test_the_warning_is_recorded_once_and_the_lead_reads_its_own(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    team = make_team("requests: 5")
    for count in range(1, 5):
        team.say("ping")
        team.wait(lambda count=count: len(_human_got(team, "pong")) == count)
        assert team.runtime.wait_idle(60)
    # The 4th request of the lead took the team to 80%: the human is told, the event
    # recorded; the lead itself reads it with its next request, not as a message.
    [warned] = team.events(BudgetWarned)
    assert (warned.limit, warned.used, warned.cap) == ("requests", 4, 5)
    assert len(_human_got(team, "80% of its budget")) == 1
    assert not [c for s, t, c in team.said("@Lead") if "of its budget" in c]
    team.say("ping")
    team.wait(lambda: len(_human_got(team, "pong")) == 5)
    assert "80% of its budget" in str(llm.requests[-1]["messages"])
    assert len(team.events(BudgetWarned)) == 1


def test_stop_ends_the_waiting_turns_and_nothing_starts_until_a_raise(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    team = make_team("requests: 2")
    team.say("delegate")
    team.wait(lambda: team.questions())
    [question] = team.questions()
    team.answer(question["id"], "stop")
    team.wait(lambda: team.events(BudgetStopped))
    assert team.runtime.wait_idle(60)
    assert team.questions() == []
    assert blocked(team.budget()) == "stopped"
    assert llm.served == 2
    assert _human_got(team, "used up its usage budget")
    # Still stopped: a new message waits for nothing and asks nothing; its turn ends.
    team.say("ping")
    assert team.runtime.wait_idle(60)
    assert llm.served == 2
    assert len(team.events(BudgetExhausted)) == 1
    team.type_line("/budget raise requests=5")
    team.say("ping")
    team.wait(lambda: _human_got(team, "pong"))


def test_an_agent_cannot_raise_the_budget_even_as_a_command_sender(
    make_team: MakeTeam,
) -> None:
    team = make_team("requests: 20")
    # @Worker is in @Lead's command_senders, so its line runs as a command: refused.
    team.say("ask the lead: /budget raise requests=1000", to="@Worker")
    team.wait(lambda: [c for s, t, c in team.said("@Worker") if "Refused" in c])
    [refusal] = [c for s, t, c in team.said("@Worker") if "Refused" in c]
    assert "only a human can change the team budget, not @Worker" in refusal
    assert team.budget().limits.requests == 20
    assert team.events(BudgetChanged) == []
    # Showing it is allowed.
    team.say("ask the lead: /budget", to="@Worker")
    team.wait(lambda: [c for s, t, c in team.said("@Worker") if c.startswith("Team budget:")])


def test_lowering_the_budget_below_what_is_spent_stops_new_work_at_once(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    team = make_team("requests: 10")
    team.say("ping")
    team.wait(lambda: _human_got(team, "pong"))
    team.say("ping")
    team.wait(lambda: len(_human_got(team, "pong")) == 2)
    assert team.runtime.wait_idle(60)
    team.type_line("/budget set requests=1")
    team.wait(lambda: _human_got(team, "below what the team already spent"))
    [reply] = _human_got(team, "below what the team already spent")
    assert "requests: 2 of 1" in reply
    assert blocked(team.budget()) == "requests"
    team.say("ping")
    team.wait(lambda: team.questions())
    assert llm.served == 2
    assert len(_human_got(team, "pong")) == 2


def test_hiring_is_refused_below_the_floor_and_hires_are_charged(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    team = make_team("requests: 10\nhire_floor: 0.5")
    team.say("via helper")  # routing to the role hires a Helper, charged to the team
    team.wait(lambda: _human_got(team, "all done: done"))
    assert team.runtime.wait_idle(60)
    members = {c.member for c in team.events(BudgetCharged)}
    helpers = [m for m in members if m.startswith("@Helper")]
    assert len(helpers) == 1, members
    assert team.budget().spent().requests == 3  # lead, helper, lead
    team.say("ping")
    team.wait(lambda: _human_got(team, "pong"))
    assert team.runtime.wait_idle(60)
    # The hiring request is charged before its tool runs: 5 of 10 used, exactly half
    # left, not below the floor; the next hire is asked at 7 of 10.
    team.say("hire")
    team.wait(lambda: _human_got(team, "tool said"))
    [said] = _human_got(team, "tool said")
    assert "Hired:" in said
    assert team.runtime.wait_idle(60)
    team.say("hire")
    team.wait(lambda: len(_human_got(team, "tool said")) == 2)
    refused = _human_got(team, "tool said")[1]
    assert "Hiring is refused" in refused
    assert "below its hiring floor of 50%" in refused


def test_the_budget_is_rebuilt_from_the_log_on_resume(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    team = make_team("requests: 5")
    for count in range(1, 5):
        team.say("ping")
        team.wait(lambda count=count: len(_human_got(team, "pong")) == count)
        assert team.runtime.wait_idle(60)
    before = team.budget().status()
    assert before["warned"]
    team.resume()
    after: TeamBudget = team.budget()
    assert after.status() == before
    team.say("ping")
    team.wait(lambda: team.runtime.wait_idle(1) and blocked(after) == "requests")
    log = team.stored()
    warned = [m.event for m in log if isinstance(getattr(m, "event", None), BudgetWarned)]
    assert len(warned) == 1, "a resumed team does not warn again"
    team.say("ping")
    team.wait(lambda: team.questions())
    [question] = team.questions()
    team.resume()  # waiting for the human, stopped, resumed: the same question is open
    rebuilt: TeamBudget = team.budget()
    assert rebuilt.question == question["id"]
    assert blocked(rebuilt) == "requests"
    from akgentic.console.views import pending_questions

    stored = team.stored()
    assert [q["id"] for q in pending_questions(list(enumerate(stored)))] == [question["id"]]
    team.type_line("/budget raise requests=10")
    team.wait(lambda: blocked(rebuilt) is None)
    exhausted = [
        m.event for m in team.stored() if isinstance(getattr(m, "event", None), BudgetExhausted)
    ]
    assert len(exhausted) == 1


def test_estimated_dollars_are_charged_from_the_price_table(
    make_team: MakeTeam, llm: ScriptedLLMServer
) -> None:
    from akgentic.llm.events import LlmUsageEvent
    from akgentic.llm.pricing import estimate_cost

    team = make_team("usd: 0.00005", lead_model="gpt-4o-mini")
    for count in range(1, 4):
        team.say("ping")
        team.wait(lambda count=count: len(_human_got(team, "pong")) == count)
        assert team.runtime.wait_idle(60)
    charged = team.events(BudgetCharged)
    each = estimate_cost("gpt-4o-mini", "openai", 100, 10)
    assert each > 0
    assert [c.usd for c in charged] == [e.estimated_cost_usd for e in team.events(LlmUsageEvent)]
    assert [c.usd for c in charged] == [each] * 3
    assert blocked(team.budget()) == "usd"  # 3 x $0.000021 > $0.00005
    team.say("ping")
    team.wait(lambda: team.questions())
    [exhausted] = team.events(BudgetExhausted)
    assert exhausted.limit == "usd"
    assert llm.served == 3
