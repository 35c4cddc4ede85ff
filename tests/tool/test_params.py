"""Channels and BaseToolParam: exposure, instructions and the serving gate."""

from __future__ import annotations

import pytest
from pydantic import ValidationError, field_validator

from akgentic.tool import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    normalize_system_prompt_to_llm_context,
    resolve_param,
)


class Lookup(BaseToolParam):
    """A capability with one real setting."""

    limit: int = 10


class Board(BaseToolParam):
    """A capability whose content moved from the system prompt to context state."""

    expose: set[Channels] = {LLM_CONTEXT, COMMAND}

    @field_validator("expose")
    @classmethod
    def _moved_to_context(cls, value: set[Channels]) -> set[Channels]:
        return normalize_system_prompt_to_llm_context(value)


def test_channel_values_are_the_persisted_strings() -> None:
    assert [c.value for c in Channels] == ["system_prompt", "tool_call", "command", "llm_context"]
    assert (SYSTEM_PROMPT, TOOL_CALL, COMMAND, LLM_CONTEXT) == (
        Channels.SYSTEM_PROMPT,
        Channels.TOOL_CALL,
        Channels.COMMAND,
        Channels.LLM_CONTEXT,
    )


def test_a_param_is_exposed_as_a_tool_call_by_default() -> None:
    assert Lookup().expose == {TOOL_CALL}
    assert Lookup().instructions is None


def test_default_expose_sets_are_not_shared_between_instances() -> None:
    first, second = Lookup(), Lookup()
    first.expose.add(COMMAND)
    assert second.expose == {TOOL_CALL}


def test_expose_is_dumped_sorted_for_stable_round_trips() -> None:
    param = Lookup(expose={TOOL_CALL, COMMAND, LLM_CONTEXT})
    dumped = param.model_dump()
    assert dumped["expose"] == ["command", "llm_context", "tool_call"]
    assert Lookup.model_validate(dumped) == param


def test_expose_reads_channel_names_from_yaml_lists() -> None:
    assert Lookup.model_validate({"expose": ["command"]}).expose == {COMMAND}


def test_an_unknown_channel_is_refused() -> None:
    with pytest.raises(ValidationError):
        Lookup.model_validate({"expose": ["telepathy"]})


def test_a_misspelt_param_field_is_refused_instead_of_dropped() -> None:
    with pytest.raises(ValidationError, match="limt"):
        Lookup.model_validate({"limt": 3})


def test_instructions_are_appended_to_the_docstring() -> None:
    param = Lookup(instructions="Never look up more than three items.")
    assert param.format_docstring("Look things up.") == (
        "Look things up.\n\nAdditional Instructions:\nNever look up more than three items."
    )


def test_no_instructions_leave_the_docstring_unchanged() -> None:
    assert Lookup().format_docstring("Look things up.") == "Look things up."
    assert Lookup().format_docstring(None) == ""


def test_instructions_go_before_the_sections_of_a_dedented_docstring() -> None:
    def lookup(term: str, limit: int = 3) -> str:
        """Look a term up.

        Args:
            term: What to look up.
            limit: How many results at most.

        Returns:
            The findings.
        """
        return term

    doc = Lookup(instructions="Be brief.").format_docstring(lookup.__doc__)
    assert doc == (
        "Look a term up.\n\nAdditional Instructions:\nBe brief.\n\n"
        "Args:\n    term: What to look up.\n    limit: How many results at most.\n\n"
        "Returns:\n    The findings."
    )


@pytest.mark.parametrize(
    "sections",
    [
        "Args:\n    term: What to look up.",
        "Parameters\n----------\nterm : str\n    What to look up.",
    ],
    ids=["google", "numpy"],
)
def test_the_schema_keeps_argument_descriptions_when_instructions_are_applied(
    sections: str,
) -> None:
    from pydantic_ai import Tool

    def lookup(term: str) -> str:
        return term

    lookup.__doc__ = "Look a term up.\n\n" + sections
    tool = Tool(Lookup(instructions="Be brief.").apply_instructions(lookup))
    assert tool.function_schema.json_schema["properties"]["term"]["description"] == (
        "What to look up."
    )
    assert "Be brief." in (tool.description or "")
    assert "What to look up." not in (tool.description or "")


def test_apply_instructions_rewrites_the_function_docstring() -> None:
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    same = Lookup(instructions="Be brief.").apply_instructions(lookup)
    assert same is lookup
    assert lookup.__doc__ == "Look a term up.\n\nAdditional Instructions:\nBe brief."


def test_false_turns_a_capability_off() -> None:
    assert resolve_param(False, Lookup) is None
    assert resolve_param(None, Lookup) is None


def test_true_means_the_param_defaults() -> None:
    resolved = resolve_param(True, Lookup)
    assert isinstance(resolved, Lookup) and resolved.limit == 10


def test_an_instance_is_used_as_given() -> None:
    param = Lookup(limit=3)
    assert resolve_param(param, Lookup) is param


def test_a_channel_outside_expose_does_not_serve_the_param() -> None:
    assert resolve_param(True, Lookup, COMMAND) is None
    assert resolve_param(True, Lookup, TOOL_CALL) is not None
    assert resolve_param(Lookup(expose={COMMAND}), Lookup, COMMAND) is not None


def test_a_param_of_another_class_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Lookup"):
        resolve_param(Board(), Lookup)


def test_stored_system_prompt_exposure_is_rewritten_to_llm_context() -> None:
    board = Board.model_validate({"expose": ["system_prompt", "command"]})
    assert board.expose == {LLM_CONTEXT, COMMAND}


def test_normalizing_leaves_other_channels_alone() -> None:
    assert normalize_system_prompt_to_llm_context({TOOL_CALL}) == {TOOL_CALL}
