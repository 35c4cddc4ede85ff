"""``workspace_list``: a directory of the tree, one level or as a tree, paged.

The walk is :func:`akgentic_workspace.treewalk.descend`: by descriptors, never through a
link, whatever the sandbox swaps meanwhile. Names are shown through
:func:`akgentic_workspace.names.shown`. A listing stops after ``max_entries`` entries
(or :data:`MAX_LIST_CHARS` characters) with a note giving the ``offset`` that shows
the next ones; the walk stops there too, so a huge tree costs only what is shown.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from akgentic.plugin_api import RetriableError
from akgentic_workspace.files import TreeFiles
from akgentic_workspace.names import shown
from akgentic_workspace.treewalk import Visit, descend

__all__ = ["DEFAULT_MAX_ENTRIES", "MAX_LIST_CHARS", "render_list"]

DEFAULT_MAX_ENTRIES = 500
MAX_LIST_CHARS = 50_000
_LAST, _MIDDLE = "└── ", "├── "
_LAST_INDENT, _MIDDLE_INDENT = "    ", "│   "


class _Full(Exception):  # noqa: N818 - ends the walk, never leaves this module
    """The page is full and at least one more entry exists."""


@dataclass
class _Page:
    offset: int
    max_entries: int
    lines: list[str] = field(default_factory=list)
    seen: int = 0
    chars: int = 0

    def add(self, line: str) -> None:
        if self.seen >= self.offset:
            if len(self.lines) >= self.max_entries or (
                self.lines and self.chars + len(line) + 1 > MAX_LIST_CHARS
            ):
                raise _Full
            self.lines.append(line)
            self.chars += len(line) + 1
        self.seen += 1


def _label(entry: os.DirEntry[str]) -> str:
    if entry.is_dir(follow_symlinks=False):
        return f"{shown(entry.name)}/"
    if entry.is_symlink():
        return f"{shown(entry.name)} -> (link)"
    try:
        size = entry.stat(follow_symlinks=False).st_size
    except OSError:
        size = 0
    return f"{shown(entry.name)} ({size} bytes)"


def render_list(
    files: TreeFiles, key: str, depth: int, offset: int = 0, max_entries: int = DEFAULT_MAX_ENTRIES
) -> str:
    """The listing of directory ``key``: one level, ``depth`` levels, or all (``0``)."""
    if offset < 0:
        raise RetriableError("offset must be 0 or more")
    try:
        top = files.open_directory(key.split("/") if key else [])
    except (FileNotFoundError, NotADirectoryError):
        raise RetriableError(f"Directory not found: {key or '.'}") from None
    page = _Page(offset, max(max_entries, 1))
    more = False
    try:
        if depth == 1:
            _flat(top, key, page)
        else:
            _tree(top, key, depth, page)
    except _Full:
        more = True
    finally:
        os.close(top)
    if not page.lines:
        if page.seen == 0:
            return "Empty directory."
        return f"No entries from offset {offset}: this listing has {page.seen}."
    header = [] if depth == 1 else ["."]
    text = "\n".join(header + page.lines)
    if more:
        after = offset + len(page.lines)
        text += (
            f"\n[... listing capped: entries {offset + 1}-{after} shown, more follow. Call "
            f"workspace_list with offset={after} for the next ones, or list a narrower path "
            "or fewer levels ...]"
        )
    return text


def _flat(top: int, key: str, page: _Page) -> None:
    with contextlib.closing(descend(top, key)) as walk:
        for visit in walk:
            for entry in [*visit.dirs, *visit.others]:
                page.add(_label(entry))
            return


def _tree(top: int, key: str, depth: int, page: _Page) -> None:
    # What the parent's visit decided for each subdirectory: its own line, and the
    # prefix of the lines under it. Files of a directory wait for its leaving visit,
    # after its subdirectories' subtrees.
    own_line: dict[str, tuple[str, str]] = {}
    files_of: dict[str, list[str]] = {}
    with contextlib.closing(descend(top, key, leave=True)) as walk:
        for visit in walk:
            if visit.leaving:
                for line in files_of.pop(visit.key, []):
                    page.add(line)
                continue
            line, prefix = own_line.pop(visit.key, ("", ""))
            if line:
                page.add(line)
            if visit.opened:
                _enter(visit, prefix, depth, own_line, files_of, page)


def _enter(
    visit: Visit,
    prefix: str,
    depth: int,
    own_line: dict[str, tuple[str, str]],
    files_of: dict[str, list[str]],
    page: _Page,
) -> None:
    ordered = [*visit.dirs, *visit.others]
    deeper = depth == 0 or visit.depth + 1 < depth
    lines = []
    for index, entry in enumerate(ordered):
        last = index == len(ordered) - 1
        line = prefix + (_LAST if last else _MIDDLE) + _label(entry)
        if deeper and index < len(visit.dirs):
            child = f"{visit.key}/{entry.name}" if visit.key else entry.name
            own_line[child] = (line, prefix + (_LAST_INDENT if last else _MIDDLE_INDENT))
        else:
            lines.append(line)
    if deeper:
        files_of[visit.key] = lines
    else:
        visit.dirs.clear()
        for line in lines:
            page.add(line)
