"""CommandRegistry construction, lookup and registration-time rejections."""

from __future__ import annotations

import gc
import weakref
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from akgentic.tool.commands import CommandRegistry, RestOfLine
from akgentic.tool.errors import CommandNotRecognized


class Address(BaseModel):
    name: str


class Card:
    """A stand-in for a tool card whose methods are commands."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def team_members(self) -> str:
        """List the members."""
        return f"{self.prefix}: Ada, Bob"

    def hire_member(self, role: str, name: str | None = None) -> Address:
        """Hire one member."""
        return Address(name=name or f"@{role}1")


def team_roles() -> str:
    return "Developer, Tester"


def test_registry_keys_commands_by_callable_name() -> None:
    card = Card("team")
    registry = CommandRegistry([(card.team_members, "TeamTool"), (team_roles, "TeamTool")])
    assert registry.names() == ["team_members", "team_roles"]
    assert len(registry) == 2


def test_has_reports_registered_names_with_or_without_slash() -> None:
    registry = CommandRegistry([(team_roles, "TeamTool")])
    assert registry.has("team_roles")
    assert registry.has("/team_roles")
    assert not registry.has("team_members")


def test_callable_returns_the_function_so_native_values_come_back() -> None:
    card = Card("team")
    registry = CommandRegistry([(card.hire_member, "TeamTool")])
    address = registry.callable("hire_member")("Developer", name="@Ada")
    assert address == Address(name="@Ada")


def test_callable_of_unknown_name_raises_command_not_recognized() -> None:
    registry = CommandRegistry([(team_roles, "TeamTool")])
    with pytest.raises(CommandNotRecognized) as caught:
        registry.callable("/fire_member")
    assert caught.value.name == "fire_member"


def test_bound_methods_are_registered_without_self() -> None:
    registry = CommandRegistry([(Card("x").hire_member, "TeamTool")])
    [descriptor] = registry.descriptors()
    assert [arg.name for arg in descriptor.args] == ["role", "name"]


def test_mapping_form_registers_under_the_given_names() -> None:
    registry = CommandRegistry({"roles": (team_roles, "TeamTool")})
    assert registry.names() == ["roles"]
    assert registry.dispatch("/roles") == "Developer, Tester"


def test_empty_registry_has_no_commands() -> None:
    registry = CommandRegistry()
    assert len(registry) == 0
    assert registry.descriptors() == []


def test_duplicate_name_across_owners_raises_naming_both_owners() -> None:
    first, second = Card("a"), Card("b")
    with pytest.raises(ValueError, match="team_members") as caught:
        CommandRegistry([(first.team_members, "TeamTool"), (second.team_members, "OtherTool")])
    assert "TeamTool" in str(caught.value)
    assert "OtherTool" in str(caught.value)


def test_duplicate_name_from_the_same_owner_also_raises() -> None:
    with pytest.raises(ValueError, match="team_roles"):
        CommandRegistry([(team_roles, "TeamTool"), (team_roles, "TeamTool")])


def test_callable_without_a_name_is_refused() -> None:
    class Anonymous:
        def __call__(self) -> str:
            return "x"

    with pytest.raises(ValueError, match="__name__"):
        CommandRegistry([(Anonymous(), "Odd")])


@pytest.mark.parametrize("name", ["", "/roles", "two words"])
def test_mapping_names_must_be_one_word_without_slash(name: str) -> None:
    with pytest.raises(ValueError, match="Invalid command name"):
        CommandRegistry({name: (team_roles, "TeamTool")})


def test_var_positional_parameters_are_refused() -> None:
    def spread(*roles: str) -> str:
        return ",".join(roles)

    with pytest.raises(ValueError, match=r"\*roles"):
        CommandRegistry([(spread, "Tool")])


def test_var_keyword_parameters_are_refused() -> None:
    def options(**flags: str) -> str:
        return str(flags)

    with pytest.raises(ValueError, match=r"\*\*flags"):
        CommandRegistry([(options, "Tool")])


def test_unannotated_parameters_are_refused() -> None:
    def loose(role, count: int = 1) -> str:  # type: ignore[no-untyped-def]
        return str(role)

    with pytest.raises(ValueError, match="'role' has no type annotation"):
        CommandRegistry([(loose, "Tool")])


def test_pydantic_model_parameters_are_refused() -> None:
    def send(target: Address) -> str:
        return target.name

    with pytest.raises(ValueError, match="pydantic model"):
        CommandRegistry([(send, "Tool")])


@pytest.mark.parametrize(
    "annotation", [list[Address], Address | None, dict[str, Address], Annotated[Address, "x"]]
)
def test_parameters_containing_pydantic_models_are_refused(annotation: Any) -> None:
    def send(target: Any) -> str:
        return str(target)

    send.__annotations__["target"] = annotation
    with pytest.raises(ValueError, match="pydantic model"):
        CommandRegistry([(send, "Tool")])


def test_rest_of_line_on_a_parameter_that_is_not_last_is_refused() -> None:
    def note(text: RestOfLine, task_id: int) -> str:
        return text

    with pytest.raises(ValueError, match="only allowed on the last parameter"):
        CommandRegistry([(note, "Planning")])


def test_optional_rest_of_line_is_refused_in_favour_of_a_default() -> None:
    def note(text: RestOfLine | None = None) -> str:
        return str(text)

    with pytest.raises(ValueError, match="default"):
        CommandRegistry([(note, "Planning")])


def test_types_pydantic_cannot_validate_are_refused_at_registration() -> None:
    class Opaque:
        pass

    def poke(target: Opaque) -> str:
        return ""

    poke.__annotations__["target"] = Opaque
    with pytest.raises(ValueError, match="'target' has a type pydantic cannot validate"):
        CommandRegistry([(poke, "Tool")])


def test_unresolvable_string_annotations_are_refused() -> None:
    def poke(target: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821 - the annotation must not resolve
        return ""

    with pytest.raises(ValueError, match="signature cannot be read"):
        CommandRegistry([(poke, "Tool")])


def test_async_commands_are_refused() -> None:
    async def later() -> str:
        return "x"

    with pytest.raises(ValueError, match="async"):
        CommandRegistry([(later, "Tool")])


def test_rejection_message_names_command_and_owner() -> None:
    def spread(*roles: str) -> str:
        return ""

    with pytest.raises(ValueError, match="Cannot register command 'spread' from PlanningTool"):
        CommandRegistry([(spread, "PlanningTool")])


def test_registry_does_not_keep_anything_but_its_callables_alive() -> None:
    card = Card("x")
    registry = CommandRegistry([(card.team_members, "TeamTool")])
    probe = weakref.ref(card)
    del card
    gc.collect()
    assert probe() is not None  # the bound method holds the card, by design
    del registry
    gc.collect()
    assert probe() is None
