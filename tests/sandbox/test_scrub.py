"""scrub_tree on a real tree: setuid/setgid bits and device nodes go, the rest stays."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from akgentic.sandbox import scrub_tree

SPECIAL = stat.S_ISUID | stat.S_ISGID


def test_setuid_and_setgid_bits_are_stripped_from_files_and_directories(tmp_path: Path) -> None:
    shell = tmp_path / "deep" / "rootsh"
    shell.parent.mkdir()
    shutil.copyfile("/bin/sh", shell)
    shell.chmod(0o6755)
    group_dir = tmp_path / "shared"
    group_dir.mkdir()
    group_dir.chmod(0o2775)
    plain = tmp_path / "plain.txt"
    plain.write_text("data", "utf-8")
    plain.chmod(0o640)

    report = scrub_tree(tmp_path)

    assert stat.S_IMODE(shell.stat().st_mode) == 0o755
    assert stat.S_IMODE(group_dir.stat().st_mode) == 0o775
    assert stat.S_IMODE(plain.stat().st_mode) == 0o640
    assert sorted(report.stripped) == ["deep/rootsh", "shared"] and not report.failed


def test_an_unreadable_setuid_file_is_stripped_too(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.write_bytes(b"x")
    locked.chmod(0o4000)
    scrub_tree(tmp_path)
    assert stat.S_IMODE(locked.stat().st_mode) == 0


def test_a_link_is_not_followed_out_of_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"x")
    outside.chmod(0o4755)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)
    (tree / "dirlink").symlink_to(tmp_path)
    scrub_tree(tree)
    assert outside.stat().st_mode & stat.S_ISUID


def test_a_hard_linked_setuid_file_loses_its_entry_not_the_shared_inode(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"x")
    outside.chmod(0o4755)
    tree = tmp_path / "tree"
    tree.mkdir()
    os.link(outside, tree / "hard")
    report = scrub_tree(tree)
    assert not (tree / "hard").exists() and report.removed == ["hard"]
    assert outside.stat().st_mode & stat.S_ISUID


def test_fifos_stay(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    scrub_tree(tmp_path)
    assert stat.S_ISFIFO((tmp_path / "pipe").lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_device_nodes_are_removed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    os.mknod(tmp_path / "sub" / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(tmp_path / "loop", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    report = scrub_tree(tmp_path)
    assert not (tmp_path / "sub" / "null").exists() and not (tmp_path / "loop").exists()
    assert sorted(report.removed) == ["loop", "sub/null"]


def test_a_tree_deeper_than_the_recursion_limit_is_scrubbed_without_error(
    tmp_path: Path,
) -> None:
    depth = 1100  # deeper than Python's recursion limit, within PATH_MAX
    fds = [os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        made = os.open("sh", os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=fds[-1])
        os.fchmod(made, 0o4755)
        os.close(made)
        report = scrub_tree(tmp_path)
        assert not os.stat("sh", dir_fd=fds[-1]).st_mode & SPECIAL
        assert report.stripped == ["/".join(["d"] * depth) + "/sh"] and not report.failed
    finally:  # pytest's own clean-up recurses: leave no deep tree behind
        os.unlink("sh", dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
        os.close(fds[0])


def test_a_tree_that_is_a_link_is_not_followed_and_the_failure_is_reported(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "sh").write_bytes(b"x")
    (real / "sh").chmod(0o4755)
    (tmp_path / "link").symlink_to(real)
    report = scrub_tree(tmp_path / "link")
    assert report.failed and (real / "sh").stat().st_mode & stat.S_ISUID
