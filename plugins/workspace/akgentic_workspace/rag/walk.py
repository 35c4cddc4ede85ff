"""The index call's walk: regular files only, dot names and ``.ragignore`` pruned, bounded.

Links, FIFOs and devices are skipped unopened (``DirEntry`` answers from ``readdir``
and ``lstat``), so a link ``d -> .`` or a FIFO ``x.md`` can neither loop nor hang it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DOCUMENT_TYPES",
    "RAGIGNORE_MAX_BYTES",
    "TEXT_TYPES",
    "WALK_BUDGET_S",
    "Walk",
    "WalkedFile",
    "load_ignore",
    "ragignore_text",
    "walk",
]

log = logging.getLogger("akgentic_workspace.rag")

_TEXT = ".cfg .csv .html .ini .js .json .log .md .py .rst .toml .ts .txt .xml .yaml .yml"
TEXT_TYPES = frozenset(f".{e}" for e in _TEXT.replace(".", "").split(" "))
_DOCS = "pdf docx xlsx xls pptx msg epub"
DOCUMENT_TYPES = frozenset(f".{e}" for e in _DOCS.split(" "))
RAGIGNORE_MAX_BYTES = 64 * 1024
WALK_BUDGET_S = 10.0

_HEADER = """\
# .ragignore — what workspace_rag_index leaves out of this tree's retrieval index.
# Indexed: text ({text}) and documents ({docs});
# never images; everything else counts as unsupported. Dot-prefixed names are skipped first.
# Rules use gitignore syntax, re-read on every index call, at most 64 KiB:
#   a matched directory is pruned: 'dir/*' plus '!dir/x/' re-includes, 'dir/' + '!dir/x' cannot;
#   a negation re-admits paths, never file types.
"""


def ragignore_text(patterns: Sequence[str]) -> str:
    """The seeded file: the comment header, then one pattern a line."""
    header = _HEADER.format(
        text=" ".join(sorted(TEXT_TYPES)), docs=" ".join(sorted(DOCUMENT_TYPES))
    )
    return header + "\n".join(patterns) + "\n"


def load_ignore(tree: Path, fallback: Sequence[str]) -> Any:
    """The tree's ``.ragignore`` as a gitignore spec; unusable -> ``fallback`` + WARNING."""
    import pathspec

    path = tree / ".ragignore"
    lines: list[str] = list(fallback)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            import stat

            if not stat.S_ISREG(st.st_mode) or st.st_size > RAGIGNORE_MAX_BYTES:
                raise ValueError("not a regular file of at most 64 KiB")
            lines = os.read(fd, RAGIGNORE_MAX_BYTES + 1).decode("utf-8").splitlines()
        finally:
            os.close(fd)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:
        log.warning("%s is unusable (%s); the card's ignore list applies", path, error)
        lines = list(fallback)
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception as error:
        log.warning("%s does not parse (%s); the card's ignore list applies", path, error)
        return pathspec.GitIgnoreSpec.from_lines(list(fallback))


@dataclass
class WalkedFile:
    """A regular file the walk found, with its ``lstat`` triple."""

    key: str
    size: int
    mtime_ns: int
    ino: int


@dataclass
class Walk:
    """What one walk found."""

    files: list[WalkedFile] = field(default_factory=list)
    ignored: int = 0
    unlistable: list[str] = field(default_factory=list)
    complete: bool = True


def walk(tree: Path, start: str, spec: Any, budget_s: float = WALK_BUDGET_S) -> Walk:
    """Walk ``start`` (a canonical key, "" = root) of ``tree`` depth first, in name order."""
    out = Walk()
    if start and spec.match_file(start + "/"):
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines([])  # named explicitly: indexed anyway
    deadline = time.monotonic() + budget_s
    stack = [start]
    while stack:
        if time.monotonic() >= deadline:
            out.complete = False
            return out
        rel = stack.pop()
        directory = tree / rel if rel else tree
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            out.unlistable.append(rel)
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            key = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if spec.match_file(key + "/"):
                        continue  # pruned unopened: its files are not counted
                    stack.append(key)
                elif entry.is_file(follow_symlinks=False):
                    if spec.match_file(key):
                        out.ignored += 1
                        continue
                    st = entry.stat(follow_symlinks=False)
                    out.files.append(WalkedFile(key, st.st_size, st.st_mtime_ns, st.st_ino))
            except OSError:
                continue
    return out
