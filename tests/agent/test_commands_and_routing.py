"""Slash commands, routing, recipient correction, hiring and the roster context."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, UserPromptPart

from akgentic.agent import Request, StructuredOutput
from akgentic.core.messages.orchestrator import StartMessage
from akgentic.tool.core.event import CommandsAnnouncedEvent


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


def user_texts(messages: list[ModelMessage]) -> str:
    return "\n".join(
        p.content
        for m in messages
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    )


def test_start_announces_every_command_once(team: Any, book: Any, helpers: Any) -> None:
    book.script("Manager")
    team.spawn(team.card("Manager"))
    helpers.wait_for(lambda: team.recorder.events(CommandsAnnouncedEvent))
    [event] = team.recorder.events(CommandsAnnouncedEvent)
    names = {d.name for d in event.commands}
    expected = {"hire_member", "fire_member", "team_members", "team_roles", "stop"}
    assert expected | {"compact", "clear"} <= names
    owners = {d.name: d.tool_card for d in event.commands}
    assert owners["compact"] == "BaseAgent" and owners["hire_member"] == "TeamTool"


def test_a_command_replies_to_its_sender_and_records_one_operator_action(
    team: Any, book: Any, helpers: Any
) -> None:
    script = book.script("Manager", out(), out())
    team.card("Developer", description="Writes code")
    manager = team.spawn(team.card("Manager", register=False))
    team.say(manager, "Warm up.")
    helpers.wait_for(lambda: len(script.seen) == 1)
    team.say(manager, "/team_roles")
    helpers.wait_for(lambda: team.to_human())
    assert "- Developer: Writes code" in team.to_human()[0]
    assert "Manager" not in team.to_human()[0]
    assert team.recorder.sent(to="@Human")[0].type == "notification"
    assert len(script.seen) == 1  # the command did not run the model
    team.say(manager, "Carry on.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    text = user_texts(script.seen[1])
    assert text.count("**Operator action**") == 1
    assert '"/team_roles"' in text


def test_an_unknown_slash_word_falls_through_to_the_model(
    team: Any, book: Any, helpers: Any
) -> None:
    script = book.script("Manager", out())
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "/etc/hosts is broken, please look")
    helpers.wait_for(lambda: script.seen)
    assert "/etc/hosts is broken, please look" in user_texts(script.seen[0])
    assert "**Operator action**" not in user_texts(script.seen[0])


def test_stop_while_idle_has_nothing_to_cancel(team: Any, book: Any, helpers: Any) -> None:
    book.script("Manager")
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "/stop")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["There is no run to cancel."]


def test_hire_by_command_binds_a_chosen_name_and_the_hire_is_a_child_of_the_hirer(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Manager")
    book.script("Developer")
    team.card("Developer")
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "/hire_member Developer name=@Ada")
    helpers.wait_for(lambda: team.proxy.get_team_member("@Ada") is not None)
    starts = [m for m in team.recorder.snapshot() if isinstance(m, StartMessage)]
    ada = next(m for m in starts if m.config.name == "@Ada")
    assert ada.parent is not None and ada.parent.name == "@Manager"
    assert ada.config.role == "Developer"


def test_a_live_members_role_is_not_hireable_unless_it_is_in_the_catalog(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Manager")
    team.card("Developer")
    manager = team.spawn(team.card("Manager", register=False))
    team.say(manager, "/hire_member Manager")
    helpers.wait_for(lambda: team.to_human())
    assert "There is no role 'Manager' to hire. Hireable roles: Developer." in team.to_human()[0]
    team.say(manager, "/hire_member Ghost")
    helpers.wait_for(lambda: len(team.to_human()) == 2)
    assert "no role 'Ghost'" in team.to_human()[1]
    assert [m.role for m in team.proxy.get_team()].count("Manager") == 1


def test_a_registered_profile_is_hireable_whatever_its_can_be_hired_flag_says(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Manager")
    book.script("Developer")
    card = team.card("Developer")
    assert card.can_be_hired is False  # the core default, as in a plain AgentCard
    manager = team.spawn(team.card("Manager", register=False))
    team.say(manager, "/hire_member Developer name=@Ada")
    helpers.wait_for(lambda: team.proxy.get_team_member("@Ada") is not None)
    assert team.agent(manager).team_directory().hireable_roles == ("Developer",)


def test_an_unreachable_recipient_is_corrected_in_the_loop_not_dropped(
    team: Any, book: Any, helpers: Any
) -> None:
    script = book.script(
        "Manager",
        out(("@Nobody", "request", "Hello?")),
        out(("@Human", "response", "Fixed recipient.")),
    )
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "Say hello.")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["Fixed recipient."]
    feedback = " ".join(str(getattr(p, "content", "")) for p in script.seen[1][-1].parts)
    assert "Nothing was sent" in feedback and "'@Nobody'" in feedback


def test_the_recipient_check_agrees_with_the_team_directory(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Manager")
    team.card("Developer")
    agent = team.agent(team.spawn(team.card("Manager", register=False)))
    directory = agent.team_directory()
    for recipients in (["@Human"], ["Developer"], [" @Human ", "Developer"], []):
        assert agent.unreachable_recipients(recipients)[0] == []
    for recipients in (["@Nobody"], ["@Human", "Ghost"], ["@Manager"], ["#tool"]):
        unreachable, full = agent.unreachable_recipients(recipients)
        assert full == directory
        assert unreachable == [r for r in recipients if not directory.reachable(r)] != []


def test_when_no_retry_is_left_an_unknown_member_is_skipped_and_the_rest_delivered(
    team: Any, book: Any, helpers: Any
) -> None:
    bad = out(("@Nobody", "request", "Hello?"), ("@Human", "response", "Still here."))
    book.script("Manager", bad, bad, bad, bad)
    manager = team.spawn(team.card("Manager", runtime_cfg={"retries": 0}))
    team.say(manager, "Say hello.")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["Still here."]


def test_the_hire_tool_reports_partial_success(team: Any, book: Any, helpers: Any) -> None:
    script = book.script(
        "Manager", helpers.call("hire_members", roles=["Developer", "Ghost"]), out()
    )
    book.script("Developer")
    team.card("Developer")
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "Hire a developer and a ghost.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    returned = [str(p.content) for p in script.seen[1][-1].parts if p.part_kind == "tool-return"]
    assert returned and returned[0].startswith("Partial success - hired: @Developer")
    assert "Ghost" in returned[0]


def test_the_fire_tool_stops_a_member(team: Any, book: Any, helpers: Any) -> None:
    script = book.script("Manager", helpers.call("fire_members", names=["@Dev1"]), out())
    book.script("Developer")
    dev_card = team.card("Developer")
    team.spawn(dev_card, name="@Dev1")
    manager = team.spawn(team.card("Manager"))
    helpers.wait_for(lambda: team.proxy.get_team_member("@Dev1") is not None)
    team.say(manager, "Fire Dev1.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    helpers.wait_for(lambda: team.proxy.get_team_member("@Dev1") is None)


def test_the_roster_and_catalog_arrive_as_a_full_block_then_as_deltas(
    team: Any, book: Any, helpers: Any
) -> None:
    script = book.script("Manager", out(("Developer", "request", "Code.")), out())
    book.script("Developer", out())
    team.card("Developer")
    manager = team.spawn(team.card("Manager", register=False))
    team.say(manager, "First.")
    helpers.wait_for(lambda: len(script.seen) == 1)
    first = user_texts(script.seen[0])
    assert "**Context update 1** — current state." in first
    assert "- Developer: The team's Developer" in first
    assert "- Manager" not in first  # spawned from its card, never registered
    helpers.wait_for(lambda: team.recorder.sent(to="@Manager") or True)
    team.say(manager, "Second.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    second = user_texts(script.seen[1][len(script.seen[0]) :])
    assert "**Context update 2**" in second
    assert "joined" in second and "(Developer)" in second
    assert "Roles of this team" not in second  # unchanged catalog is not repeated
