"""Parsing GNU unified diffs and applying their hunks in memory, without fuzz.

Line endings and the final-newline state of each file are kept; a hunk's old block
must sit at its stated line (shifted by earlier hunks) or occur exactly once
elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["FilePatch", "Hunk", "PatchError", "apply_hunks", "parse_patch"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_UNSUPPORTED = (
    "rename from",
    "rename to",
    "copy from",
    "copy to",
    "GIT binary patch",
    "Binary files",
)


class PatchError(ValueError):
    """A patch cannot be used; ``path`` names the file section when known."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)


@dataclass
class Hunk:
    """One ``@@`` block: its header, old and new lines, and no-newline markers."""

    header: str
    old_start: int
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" "|"-"|"+", text)
    old_no_newline: bool = False
    new_no_newline: bool = False

    @property
    def old_block(self) -> list[str]:
        return [text for kind, text in self.lines if kind in (" ", "-")]

    @property
    def new_block(self) -> list[str]:
        return [text for kind, text in self.lines if kind in (" ", "+")]

    @property
    def pure_add(self) -> bool:
        return all(kind == "+" for kind, _ in self.lines)


@dataclass
class FilePatch:
    """One file's section: ``old`` / ``new`` paths (None for ``/dev/null``) and hunks."""

    old: str | None
    new: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new if self.new is not None else (self.old or "")

    @property
    def creates(self) -> bool:
        return self.old is None

    @property
    def deletes(self) -> bool:
        return self.new is None


def _header_path(raw: str) -> str | None:
    text = raw.split("\t", 1)[0].rstrip("\r")
    if text == "/dev/null":
        return None
    if text.startswith(("a/", "b/")):
        text = text[2:]
    return text


def parse_patch(text: str) -> list[FilePatch]:
    """The file sections of ``text`` (PatchError for unsupported features or bad hunks)."""
    lines = text.replace("\r\n", "\n").split("\n")
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    remaining_old = remaining_new = 0
    last_kind = ""
    i = 0
    pending_feature: str | None = None
    while i < len(lines):
        line = lines[i]
        if hunk is not None and (remaining_old > 0 or remaining_new > 0):
            kind, body = (line[:1] or " "), line[1:]
            if line.startswith("\\"):
                _mark_no_newline(hunk, last_kind)
                i += 1
                continue
            if kind not in (" ", "-", "+"):
                assert current is not None
                raise PatchError(
                    current.path, f"hunk {hunk.header} is shorter than its header says"
                )
            hunk.lines.append((kind, body))
            last_kind = kind
            if kind in (" ", "-"):
                remaining_old -= 1
            if kind in (" ", "+"):
                remaining_new -= 1
            i += 1
            continue
        if line.startswith("\\") and hunk is not None:
            _mark_no_newline(hunk, last_kind)
            i += 1
            continue
        if line.startswith(_UNSUPPORTED):
            pending_feature = line
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if pending_feature is not None:
                raise PatchError(_header_path(lines[i + 1][4:]) or "", "unsupported patch feature")
            current = FilePatch(_header_path(line[4:]), _header_path(lines[i + 1][4:]))
            patches.append(current)
            hunk = None
            i += 2
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            old_count = int(match.group(2)) if match.group(2) is not None else 1
            new_count = int(match.group(4)) if match.group(4) is not None else 1
            hunk = Hunk(line, int(match.group(1)))
            current.hunks.append(hunk)
            remaining_old, remaining_new = old_count, new_count
            last_kind = ""
            i += 1
            continue
        if line.startswith("diff --git"):
            pending_feature = None
        i += 1
    if pending_feature is not None and not patches:
        raise PatchError("", "unsupported patch feature")
    return patches


def _mark_no_newline(hunk: Hunk, last_kind: str) -> None:
    if last_kind in (" ", "-"):
        hunk.old_no_newline = True
    if last_kind in (" ", "+"):
        hunk.new_no_newline = True


def _split(content: str) -> tuple[list[str], str, bool]:
    """Lines without endings, the dominant ending, and whether the text ends with one."""
    crlf = content.count("\r\n")
    lf = content.count("\n") - crlf
    ending = "\r\n" if crlf > lf else "\n"
    final = content.endswith("\n")
    body = content.replace("\r\n", "\n").split("\n")
    if final:
        body.pop()
    if content == "":
        body = []
    return body, ending, final


def _find_block(lines: list[str], block: list[str], expected: int) -> int | str:
    n = len(block)
    if 0 <= expected <= len(lines) - n and lines[expected : expected + n] == block:
        return expected
    found = [i for i in range(len(lines) - n + 1) if lines[i : i + n] == block]
    if len(found) == 1:
        return found[0]
    return "its context is not in the file" if not found else f"appears {len(found)} times"


def apply_hunks(content: str, patch: FilePatch) -> str:
    """``content`` with every hunk applied (PatchError naming the failing hunk)."""
    lines, ending, final = _split(content)
    offset = 0
    for hunk in patch.hunks:
        old = hunk.old_block
        expected = max(hunk.old_start - 1, 0) + offset
        if not old:
            at: int | str = min(max(hunk.old_start, 0) + offset, len(lines))
        else:
            at = _find_block(lines, old, expected)
        if isinstance(at, str):
            raise PatchError(patch.path, f"hunk {hunk.header} does not apply to {patch.path}: {at}")
        new = hunk.new_block
        lines[at : at + len(old)] = new
        offset += len(new) - len(old)
        touches_end = at + len(new) == len(lines)
        if touches_end:
            if hunk.new_no_newline:
                final = False
            elif hunk.old_no_newline or not content:
                final = True
    if not lines:
        return ""
    return ending.join(lines) + (ending if final else "")
