"""SkillTool's menu, loading, refusals and configuration forms."""

from __future__ import annotations

import json

import pytest
from akgentic_skill import MENU_HEADER, REFERENCE_HEADER, SkillEntry, Skills, SkillTool
from pydantic import ValidationError

from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.teams import ScriptedTeam
from akgentic.testing.waiting import wait_until
from akgentic.tool import SYSTEM_PROMPT, TOOL_CALL, RetriableError, ToolCard, ToolFactory
from akgentic.tool.testing import RecordingObserver

REFUND = SkillEntry(
    name="refund-policy",
    description="Approval rules and amount limits for customer refunds.",
    content="Refunds over 500 EUR need a manager's approval.",
)
ESCALATION = SkillEntry(
    name="escalation",
    description="When a case goes to a human, and what to hand over.",
    content="Escalate after two failed attempts; attach the transcript.",
)


def library(*entries: SkillEntry, **changes: object) -> SkillTool:
    return SkillTool(skills=Skills(skills=list(entries), **changes))


def test_the_prompt_is_the_header_and_one_line_per_skill_without_bodies() -> None:
    card = library(REFUND, ESCALATION)
    (prompt,) = card.get_system_prompts()
    assert prompt() == "\n".join(
        [
            MENU_HEADER,
            "refund-policy — Approval rules and amount limits for customer refunds.",
            "escalation — When a case goes to a human, and what to hand over.",
        ]
    )
    assert REFUND.content not in prompt()


def test_the_skills_command_returns_the_prompt_text_exactly() -> None:
    observer = RecordingObserver()
    card = library(REFUND, ESCALATION)
    registry = ToolFactory([card], observer=observer).get_command_registry()
    (prompt,) = card.get_system_prompts()
    assert registry.dispatch("/skills") == prompt()


def test_use_skill_returns_the_name_and_body_and_the_same_on_repeat() -> None:
    (use_skill,) = library(REFUND, ESCALATION).get_tools()
    first = use_skill("refund-policy")
    assert first == "refund-policy\n\nRefunds over 500 EUR need a manager's approval."
    assert use_skill("  refund-policy ") == first


def test_an_unknown_skill_is_a_retriable_error_listing_the_known_names() -> None:
    (use_skill,) = library(REFUND, ESCALATION).get_tools()
    with pytest.raises(RetriableError) as raised:
        use_skill("nope")
    assert str(raised.value) == "No skill named 'nope'. Known skills: refund-policy, escalation."


def test_a_very_long_unknown_name_is_cut_in_the_message() -> None:
    (use_skill,) = library(REFUND).get_tools()
    with pytest.raises(RetriableError) as raised:
        use_skill("x" * 5000)
    assert "x" * 100 + "'" in str(raised.value)
    assert "x" * 101 not in str(raised.value)


def test_an_empty_library_serves_an_empty_prompt_and_says_so() -> None:
    observer = RecordingObserver()
    card = SkillTool()
    factory = ToolFactory([card], observer=observer)
    (prompt,) = card.get_system_prompts()
    assert prompt() == ""
    assert factory.get_command_registry().dispatch("/skills") == "No skills are configured."
    (use_skill,) = card.get_tools()
    with pytest.raises(RetriableError, match="this library is empty"):
        use_skill("nope")


@pytest.mark.parametrize(
    "name", ["bad name", "a\nb", "x — y", "", "a" * 65, "../x", "-lead", ".hidden"]
)
def test_a_name_that_could_break_the_menu_is_refused(name: str) -> None:
    with pytest.raises(ValidationError):
        SkillEntry(name=name, description="d", content="c")


@pytest.mark.parametrize("description", ["two\nlines", "   ", "x" * 301, "a — b", "car\rriage"])
def test_a_description_that_could_break_the_menu_is_refused(description: str) -> None:
    with pytest.raises(ValidationError):
        SkillEntry(name="ok", description=description, content="c")


def test_names_differing_only_by_case_are_refused_naming_the_duplicate() -> None:
    with pytest.raises(ValidationError, match="'refund' repeats 'Refund'"):
        Skills(
            skills=[
                SkillEntry(name="Refund", description="d", content="c"),
                SkillEntry(name="refund", description="d", content="c"),
            ]
        )


def test_a_body_is_returned_verbatim_never_formatted() -> None:
    entry = SkillEntry(name="tpl", description="d", content="{__class__} {{x}}")
    (use_skill,) = library(entry).get_tools()
    assert use_skill("tpl") == "tpl\n\n{__class__} {{x}}"


def test_skills_and_the_legacy_param_key_load_the_same_library_and_dump_as_skills() -> None:
    data = {"skills": [REFUND.model_dump(mode="json")]}
    by_field = SkillTool(skills=Skills.model_validate(data))
    by_alias = SkillTool.model_validate({"param": data})
    assert by_field == by_alias
    assert "skills" in by_alias.model_dump() and "param" not in by_alias.model_dump()
    assert ToolCard.model_validate(by_alias.model_dump()) == by_field


def test_a_prompt_only_library_offers_no_tool_and_names_none() -> None:
    card = library(REFUND, expose={SYSTEM_PROMPT})
    assert card.get_tools() == []
    (prompt,) = card.get_system_prompts()
    assert prompt().splitlines()[0] == REFERENCE_HEADER
    assert "use_skill" not in prompt()


def test_the_tool_alone_serves_no_prompt() -> None:
    card = library(REFUND, expose={TOOL_CALL})
    assert card.get_system_prompts() == []
    assert [tool.__name__ for tool in card.get_tools()] == ["use_skill"]


def test_an_agent_that_uses_a_skill_gets_the_body_in_that_turns_tool_return(
    llm_server: ScriptedLLMServer,
) -> None:
    from akgentic.agent import StructuredOutput

    llm_server.add(
        tool_call("use_skill", {"name": "refund-policy"}), structured(StructuredOutput())
    )
    with ScriptedTeam(llm_server) as team:
        member = team.spawn("@Clerk", [library(REFUND, ESCALATION)])
        team.say(member, "A customer wants 700 EUR back.")
        wait_until(lambda: llm_server.served == 2, timeout=30)
    first, second = llm_server.requests
    assert "refund-policy — Approval rules" in json.dumps(first, ensure_ascii=False)
    assert REFUND.content not in json.dumps(first, ensure_ascii=False)
    tool_returns = [m for m in second["messages"] if m.get("role") == "tool"]
    assert [m["content"] for m in tool_returns] == [f"refund-policy\n\n{REFUND.content}"]
