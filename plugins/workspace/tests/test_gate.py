"""The write gate, with real files: observations, refusals, diffs, endings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


def tree(root: Path) -> Path:
    return root / "alice" / "_id" / "p"


def test_an_unread_new_file_is_written_verbatim(make_agent: Make, workspaces_root: Path) -> None:
    a = make_agent("@A")
    assert a.write("a.txt", "hello\r\nworld") == "Written: a.txt"
    assert (tree(workspaces_root) / "a.txt").read_bytes() == b"hello\r\nworld"
    assert a.write("a.txt", "again") == "Written: a.txt"  # its own write is a full view


def test_another_agent_overwriting_unread_is_refused_with_a_diff(
    make_agent: Make, workspaces_root: Path
) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("a.txt", "one\n")
    with pytest.raises(RetriableError) as refused:
        b.write("a.txt", "two\n")
    text = str(refused.value)
    assert "read it before overwriting" in text
    assert "--- live/a.txt" in text and "+++ proposed/a.txt" in text
    assert (tree(workspaces_root) / "a.txt").read_text() == "one\n"


def test_a_change_since_the_read_is_refused_then_accepted_after_a_reread(make_agent: Make) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("a.txt", "one\n")
    b.read("a.txt")
    a.write("a.txt", "two\n")
    with pytest.raises(RetriableError, match="it changed since you read it"):
        b.write("a.txt", "three\n")
    b.read("a.txt")
    assert b.write("a.txt", "three\n") == "Written: a.txt"


def test_a_deleted_file_refuses_once_then_can_be_written(make_agent: Make) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("a.txt", "x")
    b.read("a.txt")
    a.delete("a.txt")
    with pytest.raises(RetriableError, match="deleted since you read it"):
        b.write("a.txt", "y")
    assert b.write("a.txt", "y") == "Written: a.txt"


def test_a_partial_read_refuses_a_write_but_allows_an_anchored_edit(make_agent: Make) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("big.txt", "".join(f"line {i}\n" for i in range(1, 3001)))
    out = b.read("big.txt", offset=2990)
    assert "2995  line 2995" in out
    with pytest.raises(RetriableError, match="read only part"):
        b.write("big.txt", "short")
    assert "+line 2995 edited" in b.edit("big.txt", "line 2995\n", "line 2995 edited\n")


def test_a_refusal_on_a_changed_long_file_caps_the_diff_at_200_lines(make_agent: Make) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("big.txt", "".join(f"line {i}\n" for i in range(3000)))
    b.read("big.txt", limit=5000)
    a.edit("big.txt", "line 7\n", "line seven\n")
    with pytest.raises(RetriableError) as refused:
        b.write("big.txt", "".join(f"other {i}\n" for i in range(3000)))
    lines = str(refused.value).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("--- live/"))
    assert len(lines[start:-1]) == 200
    assert lines[-1].endswith("more diff line(s) not shown")


def test_an_edit_of_a_changed_file_needs_an_exact_anchor(make_agent: Make) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("f.py", "def f():\n    return 1\n\nx = 2\n")
    a.read("f.py")
    b.read("f.py")
    b.edit("f.py", "x = 2", "x = 3")
    with pytest.raises(RetriableError, match="no longer matches it exactly"):
        a.edit("f.py", "return   1", "return 11")
    assert "+    return 10" in a.edit("f.py", "    return 1\n", "    return 10\n")


def test_an_unindented_anchor_on_an_unchanged_file_is_reindented(
    make_agent: Make, workspaces_root: Path
) -> None:
    a = make_agent()
    a.write("f.py", "class A:\n    def f(self):\n        return 1\n# end\n")
    a.edit("f.py", "def f(self):\nreturn 1", "def g(self):\n    return 2")
    assert (tree(workspaces_root) / "f.py").read_text() == (
        "class A:\n    def g(self):\n        return 2\n# end\n"
    )


def test_edit_errors_are_returned_and_replace_all_is_one_pass(
    make_agent: Make, workspaces_root: Path
) -> None:
    a = make_agent()
    a.write("t.txt", "a a")
    assert "matches 2 places" in a.edit("t.txt", "a", "b")
    assert "old_string is empty" in a.edit("t.txt", "", "b")
    a.edit("t.txt", "a", "aa", replace_all=True)
    assert (tree(workspaces_root) / "t.txt").read_text() == "aa aa"


def test_multi_edit_is_all_or_nothing(make_agent: Make, workspaces_root: Path) -> None:
    a = make_agent()
    a.write("x.txt", "alpha\n")
    a.write("y.txt", "beta\n")
    out = a.multi_edit(
        [
            {"path": "x.txt", "old_string": "alpha", "new_string": "ALPHA"},
            {"path": "y.txt", "old_string": "gamma", "new_string": "GAMMA"},
        ]
    )
    assert out.startswith("[ERROR]")
    assert (tree(workspaces_root) / "x.txt").read_text() == "alpha\n"
    out = a.multi_edit(
        [
            {"path": "x.txt", "old_string": "alpha", "new_string": "ALPHA"},
            {"path": "x.txt", "old_string": "ALPHA", "new_string": "omega"},
        ]
    )
    assert (tree(workspaces_root) / "x.txt").read_text() == "omega\n"


def test_a_patch_keeps_crlf_and_the_missing_final_newline(
    make_agent: Make, workspaces_root: Path
) -> None:
    a = make_agent()
    (tree(workspaces_root)).mkdir(parents=True, exist_ok=True)
    (tree(workspaces_root) / "c.txt").write_bytes(b"one\r\ntwo\r\nthree")
    a.read("c.txt")
    patch = "--- a/c.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    assert a.patch(patch) == "updated: c.txt"
    assert (tree(workspaces_root) / "c.txt").read_bytes() == b"one\r\nTWO\r\nthree"


def test_a_patch_that_fails_anywhere_writes_nothing(
    make_agent: Make, workspaces_root: Path
) -> None:
    a = make_agent()
    a.write("x", "1\n2\n")
    patch = (
        "--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-absent\n+new\n"
        "--- /dev/null\n+++ b/y\n@@ -0,0 +1,1 @@\n+hello\n"
    )
    assert a.patch(patch).startswith("[ERROR] x:")
    assert not (tree(workspaces_root) / "y").exists()
    assert a.patch("garbage") == "[ERROR] no file patches found"


def test_a_pure_add_patch_over_an_unread_file_is_refused(make_agent: Make) -> None:
    a, b = make_agent("@A"), make_agent("@B")
    a.write("z", "old\n")
    with pytest.raises(RetriableError, match="read it before overwriting"):
        b.patch("--- /dev/null\n+++ b/z\n@@ -0,0 +1,1 @@\n+new\n")


def test_a_human_write_needs_no_read_and_the_agent_may_overwrite_it(
    make_agent: Make, workspaces_root: Path
) -> None:
    a = make_agent()
    assert (
        a.commands["workspace_write"]("notes.md", 'it\'s "quoted"')
        == "Written: notes.md (13 bytes)"
    )
    assert (tree(workspaces_root) / "notes.md").read_text() == 'it\'s "quoted"'
    assert a.write("notes.md", "mine") == "Written: notes.md"
