"""The workspace's pane of the web console: the tree, a file viewer and the journal.

Which trees a team uses is read from its log (``WorkspaceAttached`` events, one
per member bound to a tree), under this process's workspaces root. The pane
lists each tree and its git journal; a file opens through ``open(source, key)``
where ``key`` is ``"<tree number>:<path inside the tree>"``. The viewer is
confined to the tree: an absolute path, a ``..`` segment, a NUL byte or a path
whose real location (symlinks followed) is outside the tree is refused with a
``ValueError``. Registered by :mod:`akgentic_workspace.plugin` through
``akgentic_console_panes``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from akgentic.plugins import ConsolePaneSpec, hookimpl

if TYPE_CHECKING:
    from akgentic.console.panes import PaneSource

__all__ = ["akgentic_console_panes", "confined_file", "open_workspace_item", "team_trees"]

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


def confined_file(tree: Path, path: str) -> Path:
    """The file ``path`` names inside ``tree``, refusing anything that would leave it."""
    if not path or "\x00" in path:
        raise ValueError("give the path of a file inside the tree")
    if path.startswith(("/", "\\")) or os.path.isabs(path) or (len(path) > 1 and path[1] == ":"):
        raise ValueError(f"{path!r}: absolute paths are refused; give a path inside the tree")
    if any(part == ".." for part in path.replace("\\", "/").split("/")):
        raise ValueError(f"{path!r}: '..' is refused; give a path inside the tree")
    real_tree = os.path.realpath(tree)
    target = os.path.realpath(os.path.join(real_tree, path))
    if os.path.commonpath([real_tree, target]) != real_tree:
        raise ValueError(f"{path!r} leads outside the tree (a link out of it)")
    if not os.path.isfile(target):
        raise LookupError(f"{path!r} is not a file of the tree")
    return Path(target)


def _entries(tree: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    real_tree = os.path.realpath(tree)
    for directory, dirs, files in os.walk(tree, followlinks=False):
        dirs.sort()
        relative = os.path.relpath(directory, tree)
        depth = 0 if relative == "." else relative.count(os.sep) + 1
        names = [(d, True) for d in dirs] + [(f, False) for f in sorted(files)]
        for name, is_dir in names:
            if len(items) >= MAX_ENTRIES:
                return items
            path = name if relative == "." else f"{relative.replace(os.sep, '/')}/{name}"
            full = os.path.join(directory, name)
            inside = os.path.commonpath([real_tree, os.path.realpath(full)]) == real_tree
            openable = not is_dir and inside and os.path.isfile(full)
            label = name + ("/" if is_dir else "") + ("" if inside else "  (link out of the tree)")
            items.append({"key": path, "label": label, "depth": depth, "openable": openable})
    # os.walk yields a directory's entries before its subdirectories' ones: sorting by
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
        rows.append([*line.split("\x00"), "", "", "", ""][:4])
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
    target = confined_file(tree, path)
    with target.open("rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if b"\x00" in data[:8192]:
        return [{"kind": "text", "text": f"{path}: binary file, {target.stat().st_size} bytes"}]
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        text += f"\n… (first {MAX_FILE_BYTES} bytes of {target.stat().st_size})"
    return [{"kind": "text", "text": f"{path}"}, {"kind": "text", "text": text}]


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
