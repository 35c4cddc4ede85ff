"""Hiring is bounded: a team-size cap and a per-call cap on TeamTool's hiring param.

Real actors and FunctionModels. One ``hire_members`` call once hired 400 agents (an
actor thread each); now the model gets a retry message stating the cap and how many
it may still hire, and nothing beyond the cap is started, whichever path hires:
the tool, the ``/hire_member`` command, or a request routed to a role name.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic_ai.messages import ModelMessage

from akgentic.agent import Request, StructuredOutput
from akgentic.core.orchestrator import TOOL_ACTOR_PREFIX
from akgentic.tool.team import HireTeamMember, TeamTool


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


def agents(team: Any) -> list[Any]:
    """Members that count toward the cap: not humans, not tool actors."""
    return [
        m
        for m in team.proxy.get_team()
        if not m.is_user_proxy and not m.name.startswith(TOOL_ACTOR_PREFIX)
    ]


def feedback(messages: list[ModelMessage]) -> str:
    return " ".join(str(getattr(p, "content", "")) for p in messages[-1].parts)


def capped(max_team_size: int = 50, max_per_call: int = 10) -> list[TeamTool]:
    return [
        TeamTool(
            hire_team_members=HireTeamMember(max_team_size=max_team_size, max_per_call=max_per_call)
        )
    ]


def test_the_defaults_are_sane() -> None:
    param = HireTeamMember()
    assert 1 <= param.max_per_call <= param.max_team_size <= 100


def test_one_call_cannot_hire_hundreds(team: Any, book: Any, helpers: Any) -> None:
    script = book.script("Manager", helpers.call("hire_members", roles=["Developer"] * 400), out())
    book.script("Developer")
    team.card("Developer")
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "Hire everyone.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    said = feedback(script.seen[1])
    per_call = HireTeamMember().max_per_call
    assert "Nobody was hired" in said
    assert f"at most {per_call} per call" in said
    assert "you asked for 400" in said
    assert len(agents(team)) == 1


def test_the_team_size_cap_says_how_many_may_still_be_hired(
    team: Any, book: Any, helpers: Any
) -> None:
    script = book.script(
        "Manager",
        helpers.call("hire_members", roles=["Developer"] * 3),
        helpers.call("hire_members", roles=["Developer"] * 2),
        out(),
    )
    book.script("Developer")
    team.card("Developer")
    manager = team.spawn(team.card("Manager", tools=capped(max_team_size=3, max_per_call=3)))
    team.say(manager, "Hire three developers.")
    helpers.wait_for(lambda: len(script.seen) == 3)
    first = feedback(script.seen[1])
    assert "Nobody was hired" in first
    assert "at most 3 members" in first and "you may still hire 2" in first
    assert "Hired: @Developer" in feedback(script.seen[2])
    assert len(agents(team)) == 3


def test_the_hire_member_command_respects_the_team_size_cap(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Manager")
    book.script("Developer")
    team.card("Developer")
    manager = team.spawn(team.card("Manager", tools=capped(max_team_size=2)))
    team.say(manager, "/hire_member Developer name=@Ada")
    helpers.wait_for(lambda: team.proxy.get_team_member("@Ada") is not None)
    team.say(manager, "/hire_member Developer name=@Bob")
    helpers.wait_for(lambda: len(team.to_human()) == 2)
    refusal = team.to_human()[1]
    assert refusal.startswith("Command 'hire_member' failed:")
    assert "at most 2 members" in refusal and "you may still hire 0" in refusal
    assert team.proxy.get_team_member("@Bob") is None
    assert len(agents(team)) == 2


def test_routing_to_a_role_hires_no_more_than_the_cap(team: Any, book: Any, helpers: Any) -> None:
    many = out(*[("Developer", "request", f"Task {n}") for n in range(8)])
    book.script("Manager", many, default=out())
    book.script("Developer", default=out())
    team.card("Developer")
    manager = team.spawn(team.card("Manager", tools=capped(max_team_size=4)))
    team.say(manager, "Spread the work.")
    # A blocking ask: answered once the routing turn is over.
    assert team.agent(manager).name == "@Manager"
    assert len(agents(team)) == 4
    assert len(team.recorder.sent(by="@Manager")) == 3


def test_agents_hiring_at_the_same_moment_stay_under_the_cap(
    team: Any, book: Any, helpers: Any
) -> None:
    hirers = 4
    gate = threading.Barrier(hirers, timeout=30)

    def hire_together(messages: list[ModelMessage], info: Any) -> Any:
        gate.wait()
        return helpers.call("hire_members", roles=["Developer"] * 3)

    book.script("Manager", *[hire_together] * hirers, default=out())
    book.script("Developer", default=out())
    team.card("Developer")
    card = team.card("Manager", register=False, tools=capped(max_team_size=8, max_per_call=3))
    managers = [team.spawn(card, name=f"@Manager{n}") for n in range(hirers)]
    for manager in managers:
        team.say(manager, "Hire three developers.")
    script = book.scripts["Manager"]
    helpers.wait_for(lambda: len(script.seen) >= 2 * hirers, timeout=60)
    for manager in managers:
        # A blocking ask: answered once its hiring turn is over.
        assert team.agent(manager).name.startswith("@Manager")
    assert len(agents(team)) == 8
