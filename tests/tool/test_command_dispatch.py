"""The slash-command grammar of CommandRegistry.dispatch."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Literal

import pytest

from akgentic.tool.commands import CommandRegistry
from akgentic.tool.errors import CommandNotRecognized, RetriableError

calls: list[tuple[str, object]] = []


def hire_member(role: str, name: str | None = None) -> str:
    """Hire one member by role."""
    calls.append(("hire_member", (role, name)))
    return f"hired {role} as {name}"


def switch_model(model: str) -> str:
    return f"model={model}"


def repeat(word: str, times: int = 1, loud: bool = False) -> str:
    text = " ".join([word] * times)
    return text.upper() if loud else text


def hire_members(roles: list[str]) -> str:
    return "|".join(roles)


def scores(values: tuple[int, ...]) -> str:
    return str(sum(values))


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


def set_level(level: Level, mode: Literal["fast", "slow"] = "fast") -> str:
    return f"{level.name}/{mode}"


def tag(label: str, /, *, colour: str = "red") -> str:
    return f"{label}:{colour}"


def nothing() -> None:
    calls.append(("nothing", None))


def count() -> int:
    return 42


def broken() -> str:
    raise ZeroDivisionError("division by zero")


def refuse(role: str) -> str:
    raise RetriableError(f"No role named {role}; hireable roles: Developer")


def misbehave() -> str:
    raise CommandNotRecognized("inner")


@pytest.fixture
def registry() -> CommandRegistry:
    calls.clear()
    commands: list[Callable[..., object]] = [
        hire_member,
        switch_model,
        repeat,
        hire_members,
        scores,
        set_level,
        tag,
        nothing,
        count,
        broken,
        refuse,
        misbehave,
    ]
    return CommandRegistry([(command, "TestTool") for command in commands])


def test_positional_and_keyword_arguments_bind(registry: CommandRegistry) -> None:
    assert registry.dispatch("/hire_member Developer name=Bob") == "hired Developer as Bob"


def test_leading_slash_is_optional(registry: CommandRegistry) -> None:
    assert registry.dispatch("hire_member Developer") == "hired Developer as None"


def test_leading_whitespace_before_the_slash_is_ignored(registry: CommandRegistry) -> None:
    assert registry.dispatch("  /count") == "42"


def test_unknown_command_raises_and_runs_nothing(registry: CommandRegistry) -> None:
    with pytest.raises(CommandNotRecognized) as caught:
        registry.dispatch("/hire Developer name=Bob")
    assert caught.value.name == "hire"
    assert calls == []


@pytest.mark.parametrize("text", ["", "/", "   ", "/ hire_member Developer", "//hire_member x"])
def test_lines_without_a_usable_name_are_not_recognized(
    registry: CommandRegistry, text: str
) -> None:
    with pytest.raises(CommandNotRecognized):
        registry.dispatch(text)


def test_command_names_are_case_sensitive(registry: CommandRegistry) -> None:
    with pytest.raises(CommandNotRecognized):
        registry.dispatch("/Count")


def test_only_the_first_word_is_the_name(registry: CommandRegistry) -> None:
    with pytest.raises(CommandNotRecognized):
        registry.dispatch("/count-me in")


def test_quoted_values_keep_their_spaces(registry: CommandRegistry) -> None:
    assert registry.dispatch("/hire_member 'Senior Developer' name=\"Ada L\"") == (
        "hired Senior Developer as Ada L"
    )


def test_keyword_needs_a_real_parameter_name_before_the_equals(
    registry: CommandRegistry,
) -> None:
    assert registry.dispatch("/switch_model key=openai:gpt-5") == "model=key=openai:gpt-5"


def test_value_containing_equals_stays_positional(registry: CommandRegistry) -> None:
    assert registry.dispatch("/hire_member a=b c") == "hired a=b as c"


def test_keyword_value_may_itself_contain_equals(registry: CommandRegistry) -> None:
    assert registry.dispatch("/switch_model model=a=b") == "model=a=b"


def test_keyword_with_an_empty_value_binds_an_empty_string(registry: CommandRegistry) -> None:
    assert registry.dispatch("/hire_member Dev name=") == "hired Dev as "


def test_positional_after_keyword_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/hire_member name=Bob Developer")
    assert result == (
        "Command 'hire_member' failed: positional value 'Developer' follows keyword arguments"
    )
    assert calls == []


def test_value_bound_twice_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/hire_member Developer role=Tester")
    assert result == "Command 'hire_member' failed: argument 'role' was given more than once"


def test_same_keyword_twice_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/hire_member Dev name=a name=b")
    assert result == "Command 'hire_member' failed: argument 'name' was given more than once"


def test_missing_required_argument_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/hire_member name=Bob")
    assert result == "Command 'hire_member' failed: missing required argument 'role'"


def test_too_many_positionals_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/switch_model a b")
    assert result is not None
    assert result.startswith("Command 'switch_model' failed: too many arguments")
    assert "'b'" in result


def test_surplus_token_shaped_like_a_keyword_is_reported_as_unknown_argument(
    registry: CommandRegistry,
) -> None:
    result = registry.dispatch("/hire_member Dev Bob colour=red")
    assert result == (
        "Command 'hire_member' failed: unknown argument 'colour' (parameters: role, name)"
    )


def test_unbalanced_quote_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/hire_member 'Developer")
    assert result == "Command 'hire_member' failed: cannot parse arguments: No closing quotation"
    assert calls == []


def test_values_are_coerced_to_the_annotated_types(registry: CommandRegistry) -> None:
    assert registry.dispatch("/repeat hi 3 yes") == "HI HI HI"
    assert registry.dispatch("/repeat hi times=2 loud=false") == "hi hi"


def test_coercion_error_names_parameter_and_type(registry: CommandRegistry) -> None:
    result = registry.dispatch("/repeat hi times=lots")
    assert result is not None
    assert result.startswith("Command 'repeat' failed: invalid value 'lots' for 'times' (int):")


def test_list_parameters_take_comma_separated_items(registry: CommandRegistry) -> None:
    assert registry.dispatch("/hire_members Developer,Tester") == "Developer|Tester"
    assert registry.dispatch("/hire_members 'Dev , Tester,,'") == "Dev|Tester"


def test_list_parameters_accept_a_json_array(registry: CommandRegistry) -> None:
    assert registry.dispatch("""/hire_members '["a,b", "c"]'""") == "a,b|c"


def test_list_items_are_coerced_to_the_item_type(registry: CommandRegistry) -> None:
    assert registry.dispatch("/scores 1,2,3") == "6"
    result = registry.dispatch("/scores 1,x")
    assert result is not None
    assert result.startswith("Command 'scores' failed: invalid value '1,x' for 'values'")


def test_empty_list_value_gives_an_empty_list(registry: CommandRegistry) -> None:
    assert registry.dispatch("/hire_members roles=") == ""


def test_enum_accepts_values_and_member_names(registry: CommandRegistry) -> None:
    assert registry.dispatch("/set_level 2") == "HIGH/fast"
    assert registry.dispatch("/set_level LOW mode=slow") == "LOW/slow"


def test_value_outside_the_choices_lists_the_choices(registry: CommandRegistry) -> None:
    result = registry.dispatch("/set_level 1 mode=medium")
    assert result == (
        "Command 'set_level' failed: invalid value 'medium' for 'mode' "
        "(Literal['fast', 'slow']): expected one of: fast, slow"
    )


def test_keyword_only_parameters_cannot_be_filled_positionally(
    registry: CommandRegistry,
) -> None:
    assert registry.dispatch("/tag x colour=blue") == "x:blue"
    result = registry.dispatch("/tag x blue")
    assert result is not None
    assert result.startswith("Command 'tag' failed: too many arguments")


def test_positional_only_parameters_may_be_named_on_the_command_line(
    registry: CommandRegistry,
) -> None:
    assert registry.dispatch("/tag label=x") == "x:red"


def test_none_return_stays_none(registry: CommandRegistry) -> None:
    assert registry.dispatch("/nothing") is None
    assert calls == [("nothing", None)]


def test_non_string_return_is_rendered_with_str(registry: CommandRegistry) -> None:
    assert registry.dispatch("/count") == "42"


def test_command_raising_becomes_a_failure_result(registry: CommandRegistry) -> None:
    assert registry.dispatch("/broken") == (
        "Command 'broken' failed: ZeroDivisionError: division by zero"
    )


def test_retriable_error_message_is_reported_verbatim(registry: CommandRegistry) -> None:
    assert registry.dispatch("/refuse Pilot") == (
        "Command 'refuse' failed: No role named Pilot; hireable roles: Developer"
    )


def test_command_not_recognized_from_inside_a_command_does_not_escape(
    registry: CommandRegistry,
) -> None:
    result = registry.dispatch("/misbehave")
    assert result is not None
    assert result.startswith("Command 'misbehave' failed: CommandNotRecognized")


def test_arguments_to_a_command_without_parameters_fail(registry: CommandRegistry) -> None:
    result = registry.dispatch("/count now")
    assert result is not None
    assert result.startswith("Command 'count' failed: too many arguments")


def test_method_commands_dispatch_on_their_object() -> None:
    class Counter:
        def __init__(self) -> None:
            self.total = 0

        def add(self, amount: int) -> int:
            self.total += amount
            return self.total

    counter = Counter()
    registry = CommandRegistry([(counter.add, "Counter")])
    assert registry.dispatch("/add 5") == "5"
    assert registry.dispatch("/add amount=2") == "7"
    assert counter.total == 7


def test_string_annotations_are_resolved() -> None:
    # This module uses postponed annotations, so every signature here is text.
    def double(amount: int) -> int:
        return amount * 2

    assert isinstance(double.__annotations__["amount"], str)
    registry = CommandRegistry([(double, "Math")])
    assert registry.dispatch("/double 4") == "8"
