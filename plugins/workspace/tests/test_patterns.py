"""Grep, glob and .gitignore patterns: linear-time matching, capped braces, OS errors as text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace.gitignore import IgnoreFile, parse_ignore
from akgentic_workspace.oserrors import describe_os_error
from akgentic_workspace.reading import MAX_BRACE_EXPANSIONS, expand_braces

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


@pytest.fixture
def tree(workspaces_root: Path) -> Path:
    path = workspaces_root / "alice" / "_id" / "p"
    path.mkdir(parents=True)
    return path


def test_brace_expansion_stops_at_the_cap_without_expanding_the_rest() -> None:
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert len(expand_braces("{a,b}" * 8)) == MAX_BRACE_EXPANSIONS == 256
    with pytest.raises(RetriableError, match="more than 256 alternatives"):
        expand_braces("{a,b}" * 8 + "{c,d}")
    with pytest.raises(RetriableError, match="more than 256 alternatives"):
        expand_braces("{a,b,c,d}" * 40)  # 4**40 alternatives: refused after 257


def test_a_glob_that_backtracks_in_python_re_is_answered(make_agent: Make, tree: Path) -> None:
    name = "a" * 250
    (tree / name).write_text("x")
    a = make_agent()
    assert a.glob("*a" * 30 + "*b") == "No files found."
    assert a.glob("**/" * 40 + "*a" * 30) == name
    with pytest.raises(RetriableError, match="globs stop at 1024"):
        a.glob("*" * 1025)
    with pytest.raises(RetriableError, match="Invalid glob pattern"):
        a.glob("[z-a]")


def test_a_hostile_gitignore_line_is_matched_in_linear_time() -> None:
    rules = IgnoreFile("", tuple(parse_ignore("*a" * 30 + "*b\n(?<=x)\n*.log\n")))
    assert rules.verdict("a" * 250, False) is None
    assert rules.verdict("x.log", False) is True
    assert rules.verdict("(?<=x)", False) is True  # a glob, literal parentheses


def test_grep_reads_crlf_and_undecodable_bytes_and_anchors(make_agent: Make, tree: Path) -> None:
    (tree / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (tree / "bad.txt").write_bytes(b"caf\xe9 ok\n\xffnext\xfe\n")
    (tree / "uni.txt").write_text("naïve\nNAÏVE\n", encoding="utf-8")
    a = make_agent()
    assert a.grep("^two$", "crlf.txt") == "crlf.txt:2: two"
    assert a.grep("caf.", "bad.txt") == "bad.txt:1: caf\ufffd ok"
    assert a.grep("^.next.$", "bad.txt") == "bad.txt:2: \ufffdnext\ufffd"
    assert a.grep("(?i)naïve", "uni.txt") == "uni.txt:1: naïve\nuni.txt:2: NAÏVE"
    assert a.grep(r"\Athree", "crlf.txt") == "crlf.txt:3: three"  # per line
    assert a.grep(r"e\Z", "uni.txt") == "uni.txt:1: naïve"
    with pytest.raises(RetriableError, match="lookahead/lookbehind"):
        a.grep("(?<=t)wo")


def test_os_errors_are_described_without_the_host_path(tmp_path: Path) -> None:
    error = OSError(28, "No space left on device", str(tmp_path / "secret" / "f"))
    message = describe_os_error(error, "workspace_write")
    assert message.startswith("workspace_write failed: No space left on device (ENOSPC)")
    assert str(tmp_path) not in message
    assert "EUNKNOWN" in describe_os_error(OSError("no errno"))


def test_slash_commands_show_an_overlong_name_as_text(make_agent: Make, tree: Path) -> None:
    a = make_agent()
    shown = a.commands["workspace_write"]("n" * 300, "content")
    assert "ENAMETOOLONG" in shown and str(tree) not in shown
    assert "ENAMETOOLONG" in a.commands["workspace_read"]("n" * 300)
