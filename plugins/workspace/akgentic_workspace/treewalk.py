"""The one walk of a tree by directory descriptors: listings, the console's tree, the journal.

Each subdirectory is opened relative to its parent with ``O_NOFOLLOW|O_DIRECTORY``, so
a directory that code in the sandbox swaps for a link, at any depth and at any moment,
is never entered. The walk is iterative (depth costs no stack: a tree 1,200 levels deep
is walked like any other) and holds at most :data:`MAX_OPEN_DIRS` descriptors: the
shallower ones are closed and reopened through ``..`` on the way back up, checked to be
the same directory (device and inode), else the walk stops with :class:`TreeMoved`.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from dataclasses import dataclass

from akgentic.plugin_api import RetriableError

__all__ = ["MAX_OPEN_DIRS", "TreeMoved", "Visit", "descend"]

#: Directory descriptors one walk keeps open, however deep it goes.
MAX_OPEN_DIRS = 64
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeMoved(RetriableError):  # noqa: N818 - a refusal the tools translate
    """A directory of a walk was moved while the walk was under it."""


@dataclass
class Visit:
    """One directory of a :func:`descend` walk.

    ``fd`` is the directory's descriptor, valid only until the walk resumes (stat the
    entries, open files relative to it, during the visit). On entering, a consumer may
    remove entries from ``dirs`` to keep the walk out of them. Every subdirectory left
    in ``dirs`` gets a visit of its own, in order: ``opened`` False (and ``fd`` -1) when
    it could not be entered — it turned into a link, a file, or vanished.
    """

    key: str
    depth: int
    fd: int
    dirs: list[os.DirEntry[str]]
    others: list[os.DirEntry[str]]
    opened: bool = True
    leaving: bool = False


@dataclass
class _Frame:
    visit: Visit
    fd: int | None
    ident: tuple[int, int]
    pending: list[os.DirEntry[str]]


def descend(top_fd: int, top_key: str = "", *, leave: bool = False) -> Generator[Visit, None, None]:
    """Every directory from ``top_fd`` down, depth first in name order, links never entered.

    Each subdirectory is opened relative to its parent with ``O_NOFOLLOW|O_DIRECTORY``,
    so a directory swapped for a link (at any depth, at any moment) is not entered.
    With ``leave``, a directory is visited a second time (``leaving`` True, ``fd`` still
    its own) after everything under it. ``top_fd`` stays the caller's.

    Raises:
        TreeMoved: a directory the walk had to close was moved before it came back.
    """
    frames: list[_Frame] = []
    try:
        first = _enter(os.dup(top_fd), top_key, 0)
        if first is None:
            return
        frames.append(first)
        yield first.visit
        first.pending = list(reversed(first.visit.dirs))
        while frames:
            frame = frames[-1]
            if frame.pending:
                entry = frame.pending.pop()
                child_key = f"{frame.visit.key}/{entry.name}" if frame.visit.key else entry.name
                assert frame.fd is not None
                child = _enter_child(frame.fd, entry.name, child_key, frame.visit.depth + 1)
                if child is None:
                    yield Visit(child_key, frame.visit.depth + 1, -1, [], [], opened=False)
                    continue
                frames.append(child)
                if len(frames) > MAX_OPEN_DIRS:
                    shallow = frames[-1 - MAX_OPEN_DIRS]
                    if shallow.fd is not None:
                        os.close(shallow.fd)
                        shallow.fd = None
                yield child.visit
                child.pending = list(reversed(child.visit.dirs))
                continue
            frames.pop()
            assert frame.fd is not None
            if frames and frames[-1].fd is None:
                frames[-1].fd = _reopen_parent(frame.fd, frames[-1])
            if leave:
                frame.visit.leaving = True
                frame.visit.fd = frame.fd
                yield frame.visit
            os.close(frame.fd)
            frame.fd = None
    finally:
        for left in frames:
            if left.fd is not None:
                os.close(left.fd)


def _enter(fd: int, key: str, depth: int) -> _Frame | None:
    """The frame of an opened directory (``fd`` is taken); None when it cannot be listed."""
    try:
        info = os.fstat(fd)
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
        dirs: list[os.DirEntry[str]] = []
        others: list[os.DirEntry[str]] = []
        for entry in entries:
            (dirs if entry.is_dir(follow_symlinks=False) else others).append(entry)
    except OSError:
        os.close(fd)
        return None
    return _Frame(Visit(key, depth, fd, dirs, others), fd, (info.st_dev, info.st_ino), [])


def _enter_child(parent_fd: int, name: str, key: str, depth: int) -> _Frame | None:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError:
        return None  # a link now (ELOOP/ENOTDIR), or gone: never entered
    return _enter(fd, key, depth)


def _reopen_parent(child_fd: int, parent: _Frame) -> int:
    """The parent's descriptor again, through ``..`` of its child, if it is still the same."""
    fd = os.open("..", _DIR_FLAGS, dir_fd=child_fd)
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != parent.ident:
        os.close(fd)
        raise TreeMoved(
            f"{parent.visit.key or '.'} was moved while it was being walked; call again"
        )
    return fd
