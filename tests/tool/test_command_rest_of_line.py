"""Commands whose last parameter is RestOfLine."""

from __future__ import annotations

import pytest

from akgentic.tool.commands import CommandRegistry, RestOfLine


def echo(text: RestOfLine) -> str:
    return f"[{text}]"


def note(task_id: int, text: RestOfLine, /) -> str:
    return f"{task_id}:[{text}]"


def post(channel: str = "general", *, urgent: bool = False, text: RestOfLine = "") -> str:
    return f"{channel}|{urgent}|[{text}]"


@pytest.fixture
def registry() -> CommandRegistry:
    return CommandRegistry([(echo, "Chat"), (note, "Planning"), (post, "Chat")])


def test_rest_of_line_receives_the_text_verbatim(registry: CommandRegistry) -> None:
    result = registry.dispatch('/echo  don\'t   split "this" a=b ')
    assert result == '[don\'t   split "this" a=b]'


def test_rest_of_line_is_not_shlex_split_so_stray_quotes_are_fine(
    registry: CommandRegistry,
) -> None:
    assert registry.dispatch("/echo it's 'open") == "[it's 'open]"


def test_missing_required_rest_of_line_is_a_failure_result(registry: CommandRegistry) -> None:
    result = registry.dispatch("/echo   ")
    assert result == "Command 'echo' failed: missing required argument 'text'"


def test_required_earlier_parameters_take_leading_words(registry: CommandRegistry) -> None:
    assert registry.dispatch("/note 7 ship it today") == "7:[ship it today]"


def test_leading_word_is_coerced_like_any_argument(registry: CommandRegistry) -> None:
    result = registry.dispatch("/note seven ship it")
    assert result is not None
    assert result.startswith("Command 'note' failed: invalid value 'seven' for 'task_id' (int)")


def test_defaulted_earlier_parameters_are_name_value_options(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post channel=dev urgent=yes the build is red") == (
        "dev|True|[the build is red]"
    )


def test_option_values_may_be_quoted(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post channel='war room' go") == "war room|False|[go]"


def test_without_options_the_whole_line_is_the_text(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post dev is a word here") == "general|False|[dev is a word here]"


def test_options_are_only_read_before_the_text(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post hello channel=dev") == "general|False|[hello channel=dev]"


def test_double_dash_ends_the_options(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post urgent=1 -- channel=dev is literal") == (
        "general|True|[channel=dev is literal]"
    )


def test_defaulted_rest_of_line_may_be_empty(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post channel=ops") == "ops|False|[]"


def test_repeated_option_is_a_failure_result(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post channel=a channel=b hi") == (
        "Command 'post' failed: argument 'channel' was given more than once"
    )


def test_unclosed_quote_inside_an_option_is_a_failure_result(registry: CommandRegistry) -> None:
    assert registry.dispatch("/post channel='dev hi") == (
        "Command 'post' failed: cannot parse arguments: No closing quotation"
    )


def test_text_looking_like_the_rest_parameter_is_kept_as_text(registry: CommandRegistry) -> None:
    assert registry.dispatch("/echo text=hello") == "[text=hello]"


def test_rest_of_line_descriptor_marks_options_and_rest(registry: CommandRegistry) -> None:
    descriptor = {d.name: d for d in registry.descriptors()}["post"]
    flags = [(arg.name, arg.keyword_only, arg.rest_of_line) for arg in descriptor.args]
    assert flags == [("channel", True, False), ("urgent", True, False), ("text", False, True)]
    assert descriptor.args[-1].type == "str"
