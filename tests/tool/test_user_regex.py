"""compile_user_regex: untrusted patterns on RE2, refusals as tool errors."""

from __future__ import annotations

import pytest

from akgentic.tool.errors import RetriableError
from akgentic.tool.user_regex import compile_user_regex


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+$", "^(a|a?)+$", "(.*a){20}$"])
def test_patterns_that_backtrack_exponentially_are_answered(pattern: str) -> None:
    regex = compile_user_regex(pattern)
    assert regex.search("a" * 40 + "!") is None
    assert regex.search("a" * 40) is not None


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ("(?<=x)y", "lookahead/lookbehind"),
        ("x(?=y)", "lookahead/lookbehind"),
        ("(a)\\1", "backreferences"),
        ("(?P<n>a)(?P=n)", "backreferences"),
        ("((a{1000}){1000}){1000}", "repetition"),
        ("(", "missing"),
    ],
)
def test_refused_syntax_is_a_retriable_error_that_says_why(pattern: str, named: str) -> None:
    with pytest.raises(RetriableError) as caught:
        compile_user_regex(pattern)
    message = str(caught.value)
    assert named in message and repr(pattern) in message, message


def test_python_end_anchor_is_read_as_the_end_of_the_text() -> None:
    regex = compile_user_regex(r"b\Z")
    assert regex.search("ab") == (1, 2)
    assert regex.search("ab\n") is None
    assert compile_user_regex(r"\\Z").search("a\\Z") == (1, 3)  # an escaped backslash, then Z


def test_flags_and_positions_in_characters_or_bytes() -> None:
    assert compile_user_regex("^é$", multiline=True, ignore_case=True).search("x\nÉ\n") == (2, 3)
    assert compile_user_regex("^é$", multiline=True).search("x\né\n".encode()) == (2, 4)
    assert compile_user_regex("a.b", dot_all=True).fullmatch("a\nb")
    assert not compile_user_regex("a.b").fullmatch("a\nb")
    assert compile_user_regex("a").search("aXa", 1) == (2, 3)
