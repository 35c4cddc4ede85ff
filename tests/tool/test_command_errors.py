"""The exception types of akgentic.tool.errors."""

from __future__ import annotations

import pytest

from akgentic.tool import errors
from akgentic.tool.errors import (
    CommandNotRecognized,
    RetriableError,
    RoleNotHireableError,
    ToolObserverGone,
)


def test_role_not_hireable_is_a_retriable_error() -> None:
    assert issubclass(RoleNotHireableError, RetriableError)
    assert issubclass(RetriableError, Exception)


def test_tool_observer_gone_is_a_runtime_error() -> None:
    assert issubclass(ToolObserverGone, RuntimeError)


def test_command_not_recognized_is_not_retriable() -> None:
    assert not issubclass(CommandNotRecognized, RetriableError)


def test_command_not_recognized_carries_the_attempted_name() -> None:
    error = CommandNotRecognized("hire")
    assert error.name == "hire"
    assert "/hire" in str(error)


def test_command_not_recognized_for_an_empty_line_says_so() -> None:
    assert str(CommandNotRecognized("")) == "Empty command line"


@pytest.mark.parametrize("name", errors.__all__)
def test_every_error_has_a_docstring(name: str) -> None:
    assert getattr(errors, name).__doc__
