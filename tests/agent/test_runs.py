"""Inside a run: absorbing queued mail, /stop, budgets, compaction, clearing, restoring."""

from __future__ import annotations

import re
from typing import Any

from pydantic_ai.messages import ModelMessage, SystemPromptPart, UserPromptPart

from akgentic.agent import Request, StructuredOutput
from akgentic.core.messages.orchestrator import EventMessage, HandledMessage, WarningMessage
from akgentic.llm.events import LlmMessageEvent


def out(*requests: tuple[str, str, str]) -> StructuredOutput:
    return StructuredOutput(
        messages=[Request(recipient=r, message_type=t, message=m) for r, t, m in requests]
    )


def texts(messages: list[ModelMessage]) -> str:
    return "\n".join(
        str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart)
    )


def test_a_named_queued_message_is_absorbed_into_the_run_and_never_gets_its_own_turn(
    team: Any, book: Any, helpers: Any
) -> None:
    manager_ref: list[Any] = []

    def work_while_mail_arrives(messages: list[ModelMessage], info: Any) -> Any:
        team.say(manager_ref[0], "Also add tests, please.")
        return helpers.call("team_activity")

    def absorb(messages: list[ModelMessage], info: Any) -> Any:
        notice = texts(messages[-2:])
        assert "New messages arrived while you were working" in notice
        [message_id] = re.findall(r"id ([0-9a-f-]{36}): @Human \(request\)", notice)
        return helpers.call("read_mailbox", message_id=message_id)

    def answer(messages: list[ModelMessage], info: Any) -> Any:
        assert "Also add tests, please." in texts(messages[-1:])
        return out(("@Human", "response", "Handled both."))

    script = book.script("Manager", work_while_mail_arrives, absorb, answer)
    manager = team.spawn(team.card("Manager"))
    manager_ref.append(manager)
    team.say(manager, "Write the parser.")
    helpers.wait_for(lambda: team.to_human())
    team.say(manager, "/team_members")  # queued behind anything still waiting
    helpers.wait_for(lambda: len(team.to_human()) == 2)
    assert team.to_human()[0] == "Handled both."
    assert len(script.seen) == 3
    assert len([m for m in team.recorder.snapshot() if isinstance(m, HandledMessage)]) == 1


def test_reading_an_unknown_id_takes_nothing_on(team: Any, book: Any, helpers: Any) -> None:
    script = book.script("Manager", helpers.call("read_mailbox", message_id="not-an-id"), out())
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "Go.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    returned = [str(p.content) for p in script.seen[1][-1].parts if p.part_kind == "tool-return"]
    assert returned and returned[0].startswith("No queued message has the id 'not-an-id'")


def test_stop_during_a_run_interrupts_it_and_the_agent_keeps_working(
    team: Any, book: Any, helpers: Any
) -> None:
    manager_ref: list[Any] = []

    def stop_me(messages: list[ModelMessage], info: Any) -> Any:
        team.say(manager_ref[0], "/stop")
        return helpers.call("team_activity")

    script = book.script("Manager", stop_me, out(("@Human", "response", "Back at work.")))
    manager = team.spawn(team.card("Manager"))
    manager_ref.append(manager)
    team.say(manager, "Start something long.")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human() == ["@Manager stopped its run as asked."]
    assert len(script.seen) == 1
    team.say(manager, "Resume.")
    helpers.wait_for(lambda: len(team.to_human()) == 2)
    assert team.to_human()[1] == "Back at work."


def test_a_lifetime_budget_breach_reaches_the_human_as_a_notification(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Manager", out())
    manager = team.spawn(team.card("Manager", agent_usage_limits={"agent_request_limit": 1}))
    team.say(manager, "One.")
    team.say(manager, "Two.")
    helpers.wait_for(lambda: team.to_human())
    [notice] = team.recorder.sent(to="@Human")
    assert notice.type == "notification"
    assert notice.content.startswith("@Manager has used up its usage budget")
    assert "agent_request_limit" in notice.content
    helpers.wait_for(lambda: [m for m in team.recorder.snapshot() if isinstance(m, WarningMessage)])


def test_the_human_is_found_by_kind_not_by_role_name(team: Any, book: Any, helpers: Any) -> None:
    from akgentic.agent import HumanProxy
    from akgentic.core import BaseConfig

    team.proxy.createActor(HumanProxy, config=BaseConfig(name="@Boss", role="Client"))
    book.script("Manager")
    manager = team.spawn(team.card("Manager"))
    helpers.wait_for(lambda: team.proxy.get_team_member("@Boss") is not None)
    team.agent(manager).notify_human("hello")
    helpers.wait_for(lambda: team.recorder.sent(by="@Manager"))
    [note] = team.recorder.sent(by="@Manager")
    assert note.content == "hello" and note.type == "notification"


def test_usage_is_summed_from_the_teams_usage_events(team: Any, book: Any, helpers: Any) -> None:
    script = book.script("Manager", out(), out())
    manager = team.spawn(team.card("Manager"))
    team.say(manager, "One.")
    team.say(manager, "Two.")
    helpers.wait_for(lambda: len(script.seen) == 2)
    helpers.wait_for(lambda: team.agent(manager).get_usage_summary().total_requests == 2)
    summary = team.agent(manager).get_usage_summary(by_run=True)
    assert len(summary.runs) == 2 and summary.total_input_tokens > 0


def test_compact_and_clear_are_commands_and_clear_restarts_the_context_blocks(
    team: Any, book: Any, helpers: Any
) -> None:
    script = book.script("Manager", default=out())
    manager = team.spawn(
        team.card(
            "Manager",
            compaction_cfg={"strategy": "sliding_window", "keep_recent_messages": 2},
        )
    )
    for word in ("One.", "Two.", "Three."):
        team.say(manager, word)
    team.say(manager, "/compact")
    helpers.wait_for(lambda: team.to_human())
    assert team.to_human()[0].startswith("Compacted: replaced")
    team.say(manager, "/clear")
    helpers.wait_for(lambda: len(team.to_human()) == 2)
    assert team.to_human()[1].startswith("Cleared ")
    team.say(manager, "Four.")
    helpers.wait_for(lambda: len(script.seen) == 4)
    last = script.seen[3]
    assert any(isinstance(p, SystemPromptPart) for p in last[0].parts)
    assert "**Context update 1** — current state." in texts(last)
    assert "One." not in texts(last)


def test_init_llm_context_restores_the_conversation_and_the_lifetime_budget(
    team: Any, book: Any, helpers: Any
) -> None:
    book.script("Writer", out(), out(), out())
    card = team.card("Writer", agent_usage_limits={"agent_request_limit": 3})
    first = team.spawn(card, name="@Writer")
    team.say(first, "Remember the word PARSNIP.")
    team.say(first, "And the word TURNIP.")
    helpers.wait_for(lambda: len(book.scripts["Writer"].seen) == 2)
    helpers.wait_for(lambda: len([e for e in team.recorder.events(LlmMessageEvent)]) >= 4)
    events = [
        m
        for m in team.recorder.snapshot()
        if isinstance(m, EventMessage)
        and m.sender is not None
        and m.sender.agent_id == first.agent_id
    ]
    team.agent(first).stop()
    script = book.script("Writer", out(), out())
    second = team.spawn(card, name="@Writer")
    team.agent(second).init_llm_context(events)
    assert team.agent(second).react_agent.usage_totals()[0] == 2
    team.say(second, "Which words?")
    helpers.wait_for(lambda: script.seen)
    seen = texts(script.seen[0])
    assert "PARSNIP" in seen and "TURNIP" in seen
    assert seen.count("Remember the word PARSNIP.") == 1
    team.say(second, "Again?")
    helpers.wait_for(lambda: team.to_human())  # third run allowed, fourth refused
    assert "agent_request_limit" in team.to_human()[0]
    assert len(script.seen) == 1
