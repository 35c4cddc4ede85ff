"""Hostile paths: traversal, absolute paths, NUL bytes, links out of the tree, FIFOs."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


@pytest.fixture
def tree(workspaces_root: Path) -> Path:
    path = workspaces_root / "alice" / "_id" / "p"
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "sub/../../x", "/workspace/../x"])
def test_paths_leaving_the_tree_are_refused_as_escapes(
    make_agent: Make, tree: Path, path: str
) -> None:
    a = make_agent()
    calls: list[Callable[[], object]] = [
        lambda: a.read(path),
        lambda: a.write(path, "x"),
        lambda: a.delete(path),
    ]
    for call in calls:
        with pytest.raises(RetriableError, match="Path escapes workspace root"):
            call()
    assert not (tree.parent / "x").exists()


def test_the_sandbox_mount_prefix_names_the_tree(make_agent: Make, tree: Path) -> None:
    (tree / "a.txt").write_text("inside\n")
    assert "inside" in make_agent().read("/workspace/a.txt")


def test_a_nul_byte_is_a_retriable_error_never_a_raw_exception(
    make_agent: Make, tree: Path
) -> None:
    a = make_agent()
    calls: list[Callable[[], object]] = [
        lambda: a.read("a\x00b"),
        lambda: a.write("a\x00b", "x"),
        lambda: a.list("a\x00"),
    ]
    for call in calls:
        with pytest.raises(RetriableError, match="NUL byte"):
            call()


def test_links_out_of_the_tree_are_refused_or_skipped_everywhere(
    make_agent: Make, tree: Path
) -> None:
    os.symlink("/etc/passwd", tree / "pw")
    os.symlink("/etc", tree / "d")
    (tree / "ok.txt").write_text("root:inside\n")
    a = make_agent()
    calls: list[Callable[[], object]] = [
        lambda: a.read("pw"),
        lambda: a.write("pw", "x"),
        lambda: a.read("d/passwd"),
        lambda: a.write("d/evil", "x"),
        lambda: a.list("d"),
    ]
    for call in calls:
        with pytest.raises(RetriableError, match="escapes workspace root"):
            call()
    assert not Path("/etc/evil").exists()  # these tests may run as root: nothing got there
    assert a.delete("pw") == "Deleted: pw"  # the link itself goes, never /etc/passwd
    assert Path("/etc/passwd").exists()
    outputs = [a.list("", depth=d) for d in (0, 1, 2, 5)]
    outputs += [a.glob("d/*"), a.glob("**/*"), a.grep("root"), a.grep("root", "", "*")]
    for out in outputs:
        assert "/etc" not in out and "root:x" not in out, out
    assert "d -> (link)" in a.list("")
    assert "ok.txt:1: root:inside" in a.grep("root")


def test_an_in_tree_link_resolves_to_its_target_key(make_agent: Make, tree: Path) -> None:
    (tree / "sub").mkdir()
    (tree / "sub" / "a.py").write_text("x = 1\n")
    os.symlink("sub/a.py", tree / "l")
    a = make_agent()
    assert "x = 1" in a.read("l")
    assert a.write("l", "x = 2\n") == "Written: sub/a.py"
    assert (tree / "sub" / "a.py").read_text() == "x = 2\n"
    assert os.path.islink(tree / "l")
    assert a.delete("l") == "Deleted: l"
    assert (tree / "sub" / "a.py").exists()


def test_a_fifo_is_not_a_regular_file_and_does_not_block(make_agent: Make, tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    a = make_agent()
    done = threading.Event()
    errors: list[str] = []

    def read() -> None:
        try:
            a.read("pipe")
        except RetriableError as error:
            errors.append(str(error))
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(1.0), "reading a FIFO blocked"
    assert "is not a regular file" in errors[0]
    assert a.write("other.txt", "fine") == "Written: other.txt"


def test_a_huge_one_line_file_is_refused_and_many_lines_are_capped(
    make_agent: Make, tree: Path
) -> None:
    with open(tree / "huge.txt", "wb") as f:
        f.truncate(50 * 1024 * 1024)
    a = make_agent()
    with pytest.raises(RetriableError, match="over the 16 MiB read limit"):
        a.read("huge.txt")
    (tree / "many.txt").write_text("".join(f"{i:09d}\n" for i in range(1_000_000)))
    out = a.read("many.txt", limit=1_000_000)
    assert len(out) <= 100_000 + 300
    assert "continue with offset=" in out
    with pytest.raises(RetriableError, match="read only part"):
        a.write("many.txt", "x")


def test_a_non_utf8_file_names_the_byte_and_can_be_deleted_unread(
    make_agent: Make, tree: Path
) -> None:
    (tree / "bin.dat").write_bytes(b"ok\xff")
    a = make_agent()
    with pytest.raises(RetriableError, match=r"byte 0xff at offset 2 is not valid UTF-8"):
        a.read("bin.dat")
    assert a.delete("bin.dat") == "Deleted: bin.dat"


def test_a_link_swapped_in_after_resolution_is_not_followed(make_agent: Make, tree: Path) -> None:
    from akgentic_workspace.files import TreeFiles

    (tree / "sub").mkdir()
    files = TreeFiles(tree)
    os.rmdir(tree / "sub")
    os.symlink("/etc", tree / "sub")  # the key "sub/passwd" was resolved before the swap
    with pytest.raises(RetriableError, match="escapes"):
        files.read_bytes("sub/passwd")
    with pytest.raises(RetriableError, match="escapes"):
        files.stage("sub/evil", b"x")
    assert not Path("/etc/evil").exists()


def test_glob_patterns_that_escape_are_refused(make_agent: Make, tree: Path) -> None:
    a = make_agent()
    for pattern in ("../*", "/etc/*", "{a,../b}"):
        with pytest.raises(RetriableError, match="escapes workspace root"):
            a.glob(pattern)
    with pytest.raises(RetriableError, match="Invalid regex pattern"):
        a.grep("(")


def test_every_tool_refuses_an_escaping_path_and_nothing_lands_outside(
    make_agent: Make, tree: Path
) -> None:
    a = make_agent()
    outside = sorted(p.name for p in tree.parent.iterdir())
    escape = "--- a/../x\n+++ b/../x\n@@ -0,0 +1 @@\n+evil\n"
    calls: list[Callable[[], object]] = [
        lambda: a.edit("../x", "a", "b"),
        lambda: a.multi_edit([{"path": "../x", "old_string": "a", "new_string": "b"}]),
        lambda: a.patch(escape),
        lambda: a.mkdir("../evil"),
        lambda: a.mkdir("/tmp/evil-from-workspace"),
        lambda: a.rmdir("..", True, True),
        lambda: a.list("/etc"),
        lambda: a.grep("root", "../"),
        lambda: a.glob("*", "/etc"),
        lambda: a.view("../x.png"),
    ]
    for call in calls:
        with pytest.raises(RetriableError, match="escapes workspace root"):
            call()
    assert sorted(p.name for p in tree.parent.iterdir()) == outside
    assert not Path("/tmp/evil-from-workspace").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root (CAP_MKNOD)")
def test_a_device_node_is_neither_read_nor_written_through(make_agent: Make, tree: Path) -> None:
    import stat

    os.mknod(tree / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    a = make_agent()
    calls: list[Callable[[], object]] = [
        lambda: a.read("null"),
        lambda: a.write("null", "x"),
        lambda: a.edit("null", "a", "b"),
    ]
    for call in calls:
        with pytest.raises(RetriableError, match="not a regular file"):
            call()
    assert stat.S_ISCHR(os.lstat(tree / "null").st_mode)  # still the node, not replaced
    assert a.delete("null") == "Deleted: null"  # removing the node itself is allowed
