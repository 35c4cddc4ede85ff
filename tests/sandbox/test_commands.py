"""Command parsing without a shell, and the allow-list."""

from __future__ import annotations

import pytest

from akgentic.sandbox import (
    ALLOWED_COMMANDS,
    CommandNotAllowedError,
    CommandParseError,
    parse_command,
    validate_command,
)


def test_the_allow_list_holds_the_33_programs_of_the_original() -> None:
    assert len(ALLOWED_COMMANDS) == 33
    assert {"python3", "bash", "git", "make", "curl"} <= ALLOWED_COMMANDS


def test_shell_syntax_comes_back_as_literal_words() -> None:
    assert parse_command("echo 'a b' $HOME && rm -rf / ; x|y") == [
        "echo", "a b", "$HOME", "&&", "rm", "-rf", "/", ";", "x|y",
    ]  # fmt: skip


def test_unbalanced_quotes_are_a_parse_error_with_a_fix() -> None:
    with pytest.raises(CommandParseError, match="Balance the quotes"):
        validate_command("echo 'unclosed")


def test_a_nul_byte_is_a_parse_error() -> None:
    with pytest.raises(CommandParseError, match="NUL"):
        validate_command(["echo", "a\x00b"])


@pytest.mark.parametrize("command", ["", "   ", []])
def test_an_empty_command_is_refused(command: str | list[str]) -> None:
    with pytest.raises(CommandNotAllowedError, match="Command string is empty"):
        validate_command(command)


def test_an_unlisted_program_is_refused_listing_the_allowed_ones() -> None:
    with pytest.raises(CommandNotAllowedError, match="'nmap' is not in the allowed") as info:
        validate_command("nmap -sS 10.0.0.1")
    assert info.value.program == "nmap"
    assert "python3" in str(info.value)


def test_a_path_to_an_allowed_program_is_not_the_program() -> None:
    with pytest.raises(CommandNotAllowedError):
        validate_command("/usr/bin/python3 -c pass")


def test_an_allowed_command_returns_its_argv_and_a_custom_list_replaces_the_default() -> None:
    assert validate_command('python3 -c "print(1)"') == ["python3", "-c", "print(1)"]
    assert validate_command("tool x", allowed=["tool"]) == ["tool", "x"]
    with pytest.raises(CommandNotAllowedError):
        validate_command("python3", allowed=["tool"])
