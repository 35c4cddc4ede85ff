"""Finding ``old_string`` in a file: the matching cascade of ``workspace_edit``.

Strategies are tried in order and the first that matches wins. Exact matching comes
first; the others forgive what models get wrong (indentation, whitespace runs, blank
boundary lines, escaped newlines, small typos) but match whole lines and must be
unambiguous. A file that changed since the agent read it gets exact matching only.
Replacements happen in one pass over the original text, so inserted text is never
scanned again.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["EditOutcome", "apply_edit", "unified_diff"]

_RUNS = re.compile(r"[ \t]+")
_FUZZY_RATIO = 0.85
_CONTEXT = 3
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True)
class EditOutcome:
    """The new text, or why there is none (``error``: ``missing``, ``ambiguous``, ``empty``)."""

    text: str | None
    error: str | None = None
    count: int = 0
    strategy: int = 0


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    indent_from: str = ""
    indent_to: str = ""


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _first_indent(lines: list[str]) -> str:
    for line in lines:
        if line.strip():
            return _indent(line)
    return ""


def _common_indent(lines: list[str]) -> str:
    indents = [_indent(line) for line in lines if line.strip()]
    if not indents:
        return ""
    common = indents[0]
    for indent in indents[1:]:
        while not indent.startswith(common):
            common = common[:-1]
    return common


def _exact(content: str, old: str) -> list[_Span]:
    spans: list[_Span] = []
    start = 0
    while True:
        found = content.find(old, start)
        if found < 0:
            return spans
        spans.append(_Span(found, found + len(old)))
        start = found + len(old)


class _Lines:
    """The file as lines with character offsets (line text excludes its ending)."""

    def __init__(self, content: str) -> None:
        self.text: list[str] = []
        self.starts: list[int] = []
        pos = 0
        for raw in content.splitlines(keepends=True):
            body = raw.rstrip("\r\n")
            self.text.append(body)
            self.starts.append(pos)
            pos += len(raw)

    def span(self, first: int, count: int) -> tuple[int, int]:
        last = first + count - 1
        return self.starts[first], self.starts[last] + len(self.text[last])


def _line_strategy(
    content: str, old: str, normalise: Callable[[list[str]], list[str]]
) -> list[_Span]:
    lines = _Lines(content)
    wanted = old.split("\n")
    n = len(wanted)
    if n == 0 or n > len(lines.text):
        return []
    target = normalise(wanted)
    spans: list[_Span] = []
    i = 0
    while i + n <= len(lines.text):
        block = lines.text[i : i + n]
        if normalise(block) == target:
            start, end = lines.span(i, n)
            spans.append(_Span(start, end, _first_indent(wanted), _first_indent(block)))
            i += n
        else:
            i += 1
    return spans


def _trimmed(block: list[str]) -> list[str]:
    return [line.strip() for line in block]


def _collapsed(block: list[str]) -> list[str]:
    return [_RUNS.sub(" ", line).rstrip() for line in block]


def _dedented(block: list[str]) -> list[str]:
    common = _common_indent(block)
    return [line[len(common) :] if line.strip() else "" for line in block]


def _fuzzy(content: str, old: str) -> list[_Span]:
    lines = _Lines(content)
    wanted = old.split("\n")
    n = len(wanted)
    if n > len(lines.text):
        return []
    target = "\n".join(_trimmed(wanted))
    best, ratio_best, ties = -1, 0.0, 0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for i in range(len(lines.text) - n + 1):
        matcher.set_seq1("\n".join(_trimmed(lines.text[i : i + n])))
        if matcher.real_quick_ratio() < _FUZZY_RATIO or matcher.quick_ratio() < _FUZZY_RATIO:
            continue
        ratio = matcher.ratio()
        if ratio > ratio_best:
            best, ratio_best, ties = i, ratio, 1
        elif ratio == ratio_best and ratio >= _FUZZY_RATIO:
            ties += 1
    if best < 0 or ratio_best < _FUZZY_RATIO:
        return []
    if ties > 1:
        return [_Span(0, 0), _Span(0, 0)]  # ambiguous
    start, end = lines.span(best, n)
    return [_Span(start, end)]


def _unescape(text: str) -> str:
    return re.sub(
        r"\\(n|t|\"|\\)",
        lambda m: {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}[m.group(1)],
        text,
    )


def _reindent(new: str, span: _Span) -> str:
    frm, to = span.indent_from, span.indent_to
    if frm == to:
        return new
    out = []
    for line in new.split("\n"):
        if not line.strip():
            out.append(line)
        elif to.startswith(frm):
            out.append(to[len(frm) :] + line)
        elif frm.startswith(to) and line.startswith(frm[len(to) :]):
            out.append(line[len(frm) - len(to) :])
        else:
            out.append(line)
    return "\n".join(out)


def _find(content: str, old: str, exact_only: bool) -> tuple[int, list[_Span]]:
    spans = _exact(content, old)
    if spans or exact_only:
        return 1, spans
    for number, key in ((2, _trimmed), (3, _collapsed), (4, _dedented)):
        spans = _line_strategy(content, old.rstrip("\n"), key)
        if spans:
            return number, spans
    trimmed = old.strip("\n")
    lines = trimmed.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    bounded = "\n".join(lines)
    if bounded and bounded != old:
        spans = _exact(content, bounded)
        if spans:
            return 5, spans
    unescaped = _unescape(old)
    if unescaped != old:
        spans = _exact(content, unescaped)
        if spans:
            return 6, spans
    return 7, _fuzzy(content, old.rstrip("\n"))


def apply_edit(
    content: str, old: str, new: str, *, replace_all: bool = False, exact_only: bool = False
) -> EditOutcome:
    """Replace ``old`` by ``new`` in ``content`` through the cascade.

    Line endings: when the file uses CRLF throughout, matching happens on LF text and
    the result is converted back, so ``old``/``new`` may use either ending.
    """
    if old == "":
        return EditOutcome(None, "empty")
    crlf = "\r\n" in content and "\n" not in content.replace("\r\n", "")
    work = content.replace("\r\n", "\n") if crlf else content
    if crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    strategy, spans = _find(work, old, exact_only)
    if not spans:
        return EditOutcome(None, "missing", strategy=strategy)
    if len(spans) > 1 and not replace_all:
        return EditOutcome(None, "ambiguous", count=len(spans), strategy=strategy)
    pieces, pos = [], 0
    for span in spans:
        pieces.append(work[pos : span.start])
        pieces.append(_reindent(new, span) if strategy in (2, 4) else new)
        pos = span.end
    pieces.append(work[pos:])
    result = "".join(pieces)
    if crlf:
        result = result.replace("\n", "\r\n")
    return EditOutcome(result, count=len(spans), strategy=strategy)


def unified_diff(path: str, before: str, after: str, a: str = "a", b: str = "b") -> list[str]:
    """Lines of a unified diff of ``before`` -> ``after`` (no trailing newlines).

    Lines the two sides share at the start and the end are set aside first (beyond
    the three lines of context), so an edit of a large file costs what its change costs.
    """
    old, new = before.splitlines(), after.splitlines()
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    skip = max(head - _CONTEXT, 0)
    keep = max(tail - _CONTEXT, 0)
    lines = difflib.unified_diff(
        old[skip : len(old) - keep],
        new[skip : len(new) - keep],
        f"{a}/{path}",
        f"{b}/{path}",
        lineterm="",
    )
    if not skip:
        return [line.rstrip("\n") for line in lines]
    return [_shift(line.rstrip("\n"), skip) for line in lines]


def _shift(line: str, offset: int) -> str:
    """A hunk header of a diff of slices, numbered as in the whole files."""
    match = _HUNK.match(line)
    if match is None:
        return line
    old_start, old_rest, new_start, new_rest = match.groups()
    return (
        f"@@ -{int(old_start) + offset}{old_rest} +{int(new_start) + offset}{new_rest} @@"
        + line[match.end() :]
    )
