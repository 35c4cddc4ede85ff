"""``.gitignore`` rules as git reads them, for the in-process journal.

A file's untracked paths are left out of the journal exactly when ``git add -A`` would
leave them out: patterns from every ``.gitignore`` between the tree's root and the path
(the deepest file speaks first, its last matching line wins), then
``$GIT_DIR/info/exclude``; a ``!`` line re-includes; a trailing ``/`` matches only
directories; a pattern with a ``/`` before its end is anchored to its file's directory;
``**`` crosses directories. A path under an ignored directory is ignored, whatever a
deeper line says (git does not look inside it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from akgentic.plugin_api import RetriableError, UserRegex, compile_user_regex

__all__ = ["IgnoreFile", "Rule", "parse_ignore"]


@dataclass(frozen=True)
class Rule:
    """One pattern line of an ignore file."""

    regex: UserRegex
    negated: bool
    dir_only: bool
    anchored: bool


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i) and i + 2 == n and (i == 0 or pattern[i - 1] == "/"):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif pattern[i] == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) else i + 1)
            if end < 0:
                out.append(re.escape("["))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def _rule(line: str) -> Rule | None:
    if not line.strip() or line.startswith("#"):
        return None
    text = line
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    negated = text.startswith("!")
    if negated or text.startswith("\\!") or text.startswith("\\#"):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    try:
        # A tree's .gitignore is written by agents: RE2 keeps `*a*a*a*...b` linear.
        regex = compile_user_regex(_translate(text), dot_all=True)
    except RetriableError:
        return None  # git ignores a line it cannot use; so do we
    return Rule(regex, negated, dir_only, anchored)


def parse_ignore(text: str) -> list[Rule]:
    """The usable rules of one ignore file, in file order."""
    return [rule for line in text.splitlines() if (rule := _rule(line)) is not None]


@dataclass(frozen=True)
class IgnoreFile:
    """The rules of one ignore file and the tree-relative directory it sits in."""

    base: str
    rules: tuple[Rule, ...]

    def verdict(self, key: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None when no line of this file speaks."""
        if self.base:
            if not key.startswith(self.base + "/"):
                return None
            relative = key[len(self.base) + 1 :]
        else:
            relative = key
        name = relative.rsplit("/", 1)[-1]
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(relative if rule.anchored else name):
                return not rule.negated
        return None


def is_ignored(files: list[IgnoreFile], key: str, is_dir: bool) -> bool:
    """Whether ``key`` is ignored by ``files`` (outermost first, the deepest decides)."""
    for ignore in reversed(files):
        verdict = ignore.verdict(key, is_dir)
        if verdict is not None:
            return verdict
    return False
