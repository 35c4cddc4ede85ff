"""The workspace's pane of the web console: the tree, a file viewer and the journal.

Which trees a team uses is read from its log (``WorkspaceAttached`` events, one
per member bound to a tree), under this process's workspaces root. The pane
lists each tree and its git journal; a file opens through ``open(source, key)``
where ``key`` is ``"<tree number>:<path inside the tree>"``. The viewer is
confined to the tree: an absolute path, a ``..`` segment or a NUL byte is refused
with a ``ValueError``; the file is then opened once, each segment relative to its
parent with ``O_NOFOLLOW`` (the last one non-blocking), and shown only if the opened
descriptor is a regular file: a link (anywhere on the path), a FIFO, a socket or a
device is refused, whatever code in the tree swaps in meanwhile. The tree is walked
the same way; names are shown escaped (:mod:`akgentic_workspace.names`). Registered
by :mod:`akgentic_workspace.plugin` through ``akgentic_console_panes``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from akgentic.plugin_api import ConsolePaneSpec, RetriableError, hookimpl
from akgentic_workspace.files import TreeFiles
from akgentic_workspace.names import shown
from akgentic_workspace.treewalk import TreeMoved, descend

if TYPE_CHECKING:
    from akgentic.plugin_api import PaneSource

__all__ = ["akgentic_console_panes", "open_workspace_item", "read_confined", "team_trees"]

#: Entries listed per tree, bytes shown of a file, commits shown of a journal.
MAX_ENTRIES = 400
MAX_FILE_BYTES = 200_000
MAX_COMMITS = 50
_GIT_TIMEOUT_S = 10.0


def team_trees(events: Sequence[Any]) -> list[tuple[str, Path]]:
    """``(name, directory)`` of every tree the team's members were bound to, first bind first."""
    from akgentic_workspace.params import WorkspaceAttached
    from akgentic_workspace.paths import workspaces_root

    root = workspaces_root()
    found: dict[str, Path] = {}
    for message in events:
        event = getattr(message, "event", None)
        if not isinstance(event, WorkspaceAttached) or event.workspace_path in found:
            continue
        parts = event.workspace_path.split("/")
        # A name from the log is data: it must be the three plain segments the card writes.
        if len(parts) != 3 or any(p in ("", ".", "..") or "\x00" in p for p in parts):
            continue
        found[event.workspace_path] = root.joinpath(*parts)
    return list(found.items())


def read_confined(tree: Path, path: str, limit: int) -> tuple[bytes, int]:
    """At most ``limit`` bytes of the regular file ``path`` of ``tree``, and its size.

    Raises:
        ValueError: the path leaves the tree, or names a link or a non-regular file.
        LookupError: nothing, or a directory, is there.
    """
    if not path or "\x00" in path:
        raise ValueError("give the path of a file inside the tree")
    if path.startswith(("/", "\\")) or os.path.isabs(path) or (len(path) > 1 and path[1] == ":"):
        raise ValueError(f"{shown(path)}: absolute paths are refused; give a path inside the tree")
    if any(part == ".." for part in path.replace("\\", "/").split("/")):
        raise ValueError(f"{shown(path)}: '..' is refused; give a path inside the tree")
    key = "/".join(part for part in path.split("/") if part not in ("", "."))
    if not key:
        raise LookupError(f"{shown(path)} is not a file of the tree")
    try:
        return TreeFiles(tree).read_head(key, limit)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise LookupError(f"{shown(path)} is not a file of the tree") from None
    except RetriableError:
        raise ValueError(
            f"{shown(path)} is a link or not a regular file: the viewer opens regular files only"
        ) from None


def _entries(tree: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    try:
        top = os.open(os.path.realpath(tree), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return items
    try:
        with contextlib.closing(descend(top)) as walk, contextlib.suppress(TreeMoved):
            for visit in walk:
                if not visit.opened:
                    continue
                for entry in [*visit.dirs, *visit.others]:
                    if len(items) >= MAX_ENTRIES:
                        return _ordered(items)
                    key = f"{visit.key}/{entry.name}" if visit.key else entry.name
                    is_dir = entry.is_dir(follow_symlinks=False)
                    link = entry.is_symlink()
                    label = shown(entry.name) + ("/" if is_dir else " -> (link)" if link else "")
                    # An undecodable name could not travel back from the browser intact.
                    openable = entry.is_file(follow_symlinks=False) and not _undecodable(key)
                    items.append(
                        {"key": key, "label": label, "depth": visit.depth, "openable": openable}
                    )
    finally:
        os.close(top)
    return _ordered(items)


def _undecodable(key: str) -> bool:
    return any(0xDC80 <= ord(char) <= 0xDCFF for char in key)


def _ordered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The walk lists a directory's entries before its subdirectories' ones: sorting by
    # path components puts every entry right under its directory.
    items.sort(key=lambda item: item["key"].split("/"))
    return items


def _journal(tree: Path) -> list[list[str]]:
    git_dir = tree.with_name(f"{tree.name}.git")
    if not git_dir.is_dir():
        return []
    try:
        done = subprocess.run(
            [
                "git",
                f"--git-dir={git_dir}",
                "log",
                f"-n{MAX_COMMITS}",
                "--date=iso",
                "--format=%h%x00%an%x00%ad%x00%s",
            ],
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    rows = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        rows.append([shown(cell) for cell in [*line.split("\x00"), "", "", "", ""][:4]])
    return rows


def render_workspace_pane(source: PaneSource) -> list[Mapping[str, Any]]:
    """Per tree: its name, its entries (files open in the viewer) and its journal."""
    trees = team_trees(source.events)
    if not trees:
        return [{"kind": "text", "text": "No member is bound to a workspace yet."}]
    blocks: list[Mapping[str, Any]] = []
    for number, (name, tree) in enumerate(trees):
        blocks.append({"kind": "text", "text": f"tree {name}"})
        if not tree.is_dir():
            blocks.append({"kind": "text", "text": "(not on this machine's workspaces root)"})
            continue
        entries = _entries(tree)
        for entry in entries:
            entry["key"] = f"{number}:{entry['key']}"
        blocks.append(
            {"kind": "tree", "items": entries} if entries else {"kind": "text", "text": "(empty)"}
        )
        commits = _journal(tree)
        if commits:
            blocks.append({"kind": "text", "text": "journal"})
            blocks.append(
                {
                    "kind": "table",
                    "columns": ["commit", "author", "date", "change"],
                    "rows": commits,
                }
            )
    return blocks


def open_workspace_item(source: PaneSource, key: str) -> list[Mapping[str, Any]]:
    """The text of one file (``"<tree number>:<path>"``), confined to its tree."""
    number, sep, path = key.partition(":")
    trees = team_trees(source.events)
    if not sep or not number.isdigit() or int(number) >= len(trees):
        raise LookupError(f"no tree for item {key!r}")
    _name, tree = trees[int(number)]
    data, size = read_confined(tree, path, MAX_FILE_BYTES + 1)
    if b"\x00" in data[:8192]:
        return [{"kind": "text", "text": f"{shown(path)}: binary file, {size} bytes"}]
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        text += f"\n… (first {MAX_FILE_BYTES} bytes of {size})"
    return [{"kind": "text", "text": shown(path)}, {"kind": "text", "text": text}]


@hookimpl
def akgentic_console_panes() -> Iterable[ConsolePaneSpec]:
    """The ``workspace`` card's pane of the web console."""
    return [
        ConsolePaneSpec(
            name="workspace",
            card="workspace",
            title="Workspace",
            render=render_workspace_pane,
            open=open_workspace_item,
        )
    ]
