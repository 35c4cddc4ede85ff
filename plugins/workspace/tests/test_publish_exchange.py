"""Publishing over an existing file by exchange: the same outcome as a rename, less waiting.

``exchange_then_unlink`` is exercised directly on real directories (``renameat2`` with
``RENAME_EXCHANGE`` works on ext4, tmpfs, xfs and btrfs alike); the card's own publish
runs through it wherever the test directory sits on ext4 without a journal, as this
machine's disk does, and through ``os.replace`` elsewhere: both must give these results.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from akgentic_workspace.exchange import exchange_then_unlink, replace_flushes_for_nothing
from akgentic_workspace.files import STAGING_PATTERN, TreeFiles

from akgentic.tool.errors import RetriableError

Make = Callable[..., Any]


def _staging(directory: Path, name: str, data: bytes) -> str:
    staging = f".{name}.{'ab' * 16}.tmp"
    (directory / staging).write_bytes(data)
    return staging


def _exchange(directory: Path, staging: str, name: str) -> bool:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return exchange_then_unlink(fd, staging, name)
    finally:
        os.close(fd)


def test_an_exchange_publishes_a_new_file_and_leaves_no_staging(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    before = (tmp_path / "a.txt").stat().st_ino
    staging = _staging(tmp_path, "a.txt", b"new\n")
    assert _exchange(tmp_path, staging, "a.txt") is True
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"
    assert (tmp_path / "a.txt").stat().st_ino != before  # a new file, as a rename gives
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_hard_link_elsewhere_keeps_the_old_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old\n")
    os.link(tmp_path / "a.txt", tmp_path / "other-name.txt")
    staging = _staging(tmp_path, "a.txt", b"new\n")
    assert _exchange(tmp_path, staging, "a.txt") is True
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"
    assert (tmp_path / "other-name.txt").read_bytes() == b"old\n"


def test_a_directory_swapped_in_at_the_name_is_put_back_untouched(tmp_path: Path) -> None:
    (tmp_path / "a.txt").mkdir()
    (tmp_path / "a.txt" / "inside").write_bytes(b"keep\n")
    staging = _staging(tmp_path, "a.txt", b"new\n")
    assert _exchange(tmp_path, staging, "a.txt") is False
    assert (tmp_path / "a.txt" / "inside").read_bytes() == b"keep\n"
    assert (tmp_path / staging).read_bytes() == b"new\n"  # the caller still owns it


def test_a_missing_target_falls_back_without_changing_anything(tmp_path: Path) -> None:
    staging = _staging(tmp_path, "a.txt", b"new\n")
    assert _exchange(tmp_path, staging, "a.txt") is False
    assert sorted(p.name for p in tmp_path.iterdir()) == [staging]


def test_only_ext4_without_a_journal_takes_the_exchange(tmp_path: Path) -> None:
    if Path("/dev/shm").is_dir():
        assert replace_flushes_for_nothing(Path("/dev/shm")) is False  # tmpfs
    device = os.stat(tmp_path).st_dev
    block = os.path.realpath(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    task = Path("/sys/fs/ext4", os.path.basename(block), "journal_task")
    expected = task.is_file() and task.read_text().strip() == "<none>"
    assert replace_flushes_for_nothing(tmp_path) is expected


def test_tree_publish_over_a_file_keeps_mode_and_refuses_a_directory(tmp_path: Path) -> None:
    files = TreeFiles(tmp_path)
    (tmp_path / "run.sh").write_bytes(b"echo old\n")
    (tmp_path / "run.sh").chmod(0o750)
    files.publish(files.stage("run.sh", b"echo new\n"))
    assert (tmp_path / "run.sh").read_bytes() == b"echo new\n"
    assert stat.S_IMODE((tmp_path / "run.sh").stat().st_mode) == 0o750
    # Another hand puts a directory where the file was between staging and publishing.
    (tmp_path / "b.txt").write_bytes(b"old\n")
    staged = files.stage("b.txt", b"new\n")
    (tmp_path / "b.txt").unlink()
    (tmp_path / "b.txt").mkdir()
    (tmp_path / "b.txt" / "inside").write_bytes(b"keep\n")
    with pytest.raises(RetriableError, match="not published"):
        files.publish(staged)
    assert (tmp_path / "b.txt" / "inside").read_bytes() == b"keep\n"
    assert not [p for p in tmp_path.iterdir() if STAGING_PATTERN.match(p.name)]


def test_edits_through_the_card_leave_only_the_file(make_agent: Make) -> None:
    a = make_agent()
    a.write("e.txt", "".join(f"line {n}\n" for n in range(20)))
    for n in range(5):
        a.edit("e.txt", f"line {n}\n", f"edited {n}\n")
    tree = Path(a.card._session.location.tree)
    assert (tree / "e.txt").read_text().startswith("edited 0\nedited 1\n")
    assert sorted(p.name for p in tree.iterdir()) == ["e.txt"]
