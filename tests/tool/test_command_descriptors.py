"""CommandArg / CommandDescriptor models and what descriptors() derives from callables."""

from __future__ import annotations

import enum
from typing import Literal

import pytest
from pydantic import ValidationError

from akgentic.tool.commands import CommandArg, CommandDescriptor, CommandRegistry


class Priority(enum.StrEnum):
    LOW = "low"
    HIGH = "high"


def search_planning(
    query: str,
    status: Literal["open", "done"] | None = None,
    priorities: list[Priority] | None = None,
    *,
    limit: int = 10,
) -> str:
    """Search the shared task board.

    Matches titles and descriptions; this second paragraph is not the summary.

    Args:
        query: Words to look for.
        status (str): Only tasks in this state.
        priorities: Keep tasks with any of these
            priorities (comma-separated).

    Returns:
        The matching tasks, one per line.
    """
    return query


def undocumented(flag: bool) -> None:
    return None


def multi_line_summary() -> str:
    """Render the whole
    planning board.
    """
    return ""


@pytest.fixture
def descriptors() -> dict[str, CommandDescriptor]:
    registry = CommandRegistry(
        [
            (search_planning, "PlanningTool"),
            (undocumented, "BaseAgent"),
            (multi_line_summary, "PlanningTool"),
        ]
    )
    return {descriptor.name: descriptor for descriptor in registry.descriptors()}


def test_descriptors_follow_registration_order() -> None:
    registry = CommandRegistry([(undocumented, "A"), (search_planning, "B")])
    assert [d.name for d in registry.descriptors()] == ["undocumented", "search_planning"]


def test_descriptor_names_the_owning_tool_card(descriptors: dict[str, CommandDescriptor]) -> None:
    assert descriptors["search_planning"].tool_card == "PlanningTool"
    assert descriptors["undocumented"].tool_card == "BaseAgent"


def test_description_is_the_first_docstring_paragraph(
    descriptors: dict[str, CommandDescriptor],
) -> None:
    assert descriptors["search_planning"].description == "Search the shared task board."
    assert descriptors["multi_line_summary"].description == "Render the whole planning board."


def test_description_is_empty_without_a_docstring(
    descriptors: dict[str, CommandDescriptor],
) -> None:
    assert descriptors["undocumented"].description == ""
    assert descriptors["undocumented"].args[0].description is None


def test_argument_descriptions_come_from_the_args_section(
    descriptors: dict[str, CommandDescriptor],
) -> None:
    described = {arg.name: arg.description for arg in descriptors["search_planning"].args}
    assert described == {
        "query": "Words to look for.",
        "status": "Only tasks in this state.",
        "priorities": "Keep tasks with any of these priorities (comma-separated).",
        "limit": None,
    }


def test_argument_types_required_and_keyword_only(
    descriptors: dict[str, CommandDescriptor],
) -> None:
    shape = [
        (arg.name, arg.type, arg.required, arg.keyword_only)
        for arg in descriptors["search_planning"].args
    ]
    assert shape == [
        ("query", "str", True, False),
        ("status", "Literal['open', 'done'] | None", False, False),
        ("priorities", "list[Priority] | None", False, False),
        ("limit", "int", False, True),
    ]


def test_choices_are_listed_for_literal_and_enum_types(
    descriptors: dict[str, CommandDescriptor],
) -> None:
    choices = {arg.name: arg.choices for arg in descriptors["search_planning"].args}
    assert choices == {
        "query": None,
        "status": ["open", "done"],
        "priorities": ["low", "high"],
        "limit": None,
    }


def test_descriptors_are_fresh_copies() -> None:
    registry = CommandRegistry([(search_planning, "PlanningTool")])
    first = registry.descriptors()[0]
    first.args[0].description = "changed"
    assert registry.descriptors()[0].args[0].description == "Words to look for."


def test_descriptor_round_trips_through_json(descriptors: dict[str, CommandDescriptor]) -> None:
    original = descriptors["search_planning"]
    assert CommandDescriptor.model_validate_json(original.model_dump_json()) == original


def test_command_arg_defaults() -> None:
    arg = CommandArg(name="role", type="str", required=True)
    assert (arg.description, arg.keyword_only, arg.rest_of_line, arg.choices) == (
        None,
        False,
        False,
        None,
    )


def test_models_refuse_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        CommandArg.model_validate({"name": "x", "type": "str", "required": True, "hidden": True})
    with pytest.raises(ValidationError):
        CommandDescriptor.model_validate(
            {"name": "x", "description": "", "args": [], "tool_card": "T", "extra": 1}
        )
