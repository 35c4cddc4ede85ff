"""The read side's renderings: numbered lines, glob and grep results (listings: listing.py).

Everything here is bounded: line length, output size, result counts; links are shown
or skipped, never followed out of the tree.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from akgentic.plugin_api import RetriableError, UserRegex, compile_user_regex
from akgentic_workspace.files import MAX_FILE_BYTES, STAGING_PATTERN, TreeFiles
from akgentic_workspace.names import shown as shown_name

__all__ = [
    "MAX_BRACE_EXPANSIONS",
    "MAX_GLOB_CHARS",
    "MAX_LINE_CHARS",
    "MAX_OUTPUT_CHARS",
    "Window",
    "checked_patterns",
    "expand_braces",
    "glob_source",
    "render_glob",
    "render_grep",
    "render_window",
    "split_lines",
]

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BYTE_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_REGEX_META = frozenset(".^$*+?{}[]\\|()")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def split_lines(text: str) -> list[str]:
    """Lines split on ``\\r\\n``, ``\\r`` and ``\\n`` (a final ending adds no line)."""
    if not text:
        return []
    # str.split is several times faster than the regex; without "\r" they agree.
    lines = text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Window:
    """A rendered page of a file, and whether it showed the whole file untouched."""

    text: str
    full: bool


def render_window(lines: list[str], offset: int, limit: int) -> Window:
    """``f"{n:<6}{line}"`` lines from ``offset`` (1-based), at most ``limit`` of them."""
    total = len(lines)
    if total == 0:
        return Window("(empty file)", True)
    first = max(offset, 1)
    if first > total:
        return Window(
            f"[... offset {first} is past the end: the file has {total} lines ...]", False
        )
    end = min(total, first - 1 + max(limit, 1))
    page = lines[first - 1 : end]
    if max(map(len, page)) <= MAX_LINE_CHARS:
        # The common page: nothing to clip; one pass, and the cap checked once.
        shown = [f"{number:<6}{line}" for number, line in enumerate(page, first)]
        text = "\n".join(shown)
        if len(text) < MAX_OUTPUT_CHARS:
            if first > 1 or end < total:
                text += f"\n[... truncated: {total} lines total, showing {first}-{end} ...]"
            return Window(text, first == 1 and end == total)
    out: list[str] = []
    size = 0
    clipped = capped = False
    last = first - 1
    for number in range(first, min(total, first - 1 + max(limit, 1)) + 1):
        line = lines[number - 1]
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [line clipped: {len(line)} chars]"
            clipped = True
        rendered = f"{number:<6}{line}"
        if size + len(rendered) + 1 > MAX_OUTPUT_CHARS and out:
            capped = True
            break
        out.append(rendered)
        size += len(rendered) + 1
        last = number
    text = "\n".join(out)
    if capped:
        text += (
            f"\n[... output capped at {MAX_OUTPUT_CHARS} characters: {total} lines total, "
            f"showing {first}-{last}; continue with offset={last + 1} ...]"
        )
    elif first > 1 or last < total:
        text += f"\n[... truncated: {total} lines total, showing {first}-{last} ...]"
    full = first == 1 and last == total and not clipped and not capped
    return Window(text, full)


# ---------------------------------------------------------------- glob

MAX_BRACE_EXPANSIONS = 256
"""How many alternatives one glob's ``{a,b}`` groups may expand to (22 groups are 4M)."""
MAX_GLOB_CHARS = 1024
"""The longest glob accepted (it bounds the depth of brace nesting too)."""


def expand_braces(pattern: str, cap: int = MAX_BRACE_EXPANSIONS) -> list[str]:
    """``a{b,c}d`` -> ``["abd", "acd"]`` (nested braces expand too).

    Expansion stops at the first alternative past ``cap``, which raises a
    RetriableError: a pattern of a million alternatives costs no more than ``cap``.
    """
    out: list[str] = []
    for expanded in _expansions(pattern):
        if len(out) == cap:
            raise RetriableError(
                f"Pattern '{pattern}' expands to more than {cap} alternatives: "
                "use fewer {a,b} groups (or a wider pattern such as '*') and narrow later"
            )
        out.append(expanded)
    return out


def _expansions(pattern: str) -> Iterator[str]:
    group = _first_group(pattern)
    if group is None:
        yield pattern
        return
    start, end, options = group
    head, tail = pattern[:start], pattern[end + 1 :]
    for option in options:
        yield from _expansions(head + option + tail)


def _first_group(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first balanced ``{...}``: its bounds and its top-level options."""
    start = pattern.find("{")
    while start >= 0:
        depth, begin, options = 0, start + 1, []
        for i in range(start, len(pattern)):
            c = pattern[i]
            if c == "{":
                depth += 1
            elif c == "," and depth == 1:
                options.append(pattern[begin:i])
                begin = i + 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    options.append(pattern[begin:i])
                    return start, i, options
        start = pattern.find("{", start + 1)  # unbalanced: a literal brace
    return None


def glob_source(pattern: str) -> str:
    """The RE2 source of one brace-free glob, unanchored (``**`` crosses directories)."""
    pattern = re.sub(r"\*\*(?=[^/*])", "**/*", pattern)  # "**.py" -> "**/*.py"
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def checked_patterns(pattern: str) -> UserRegex:
    """One case-insensitive matcher for ``pattern`` and all its brace expansions.

    Raises a RetriableError when an expansion escapes the tree, the pattern is over
    :data:`MAX_GLOB_CHARS` or expands past :data:`MAX_BRACE_EXPANSIONS`, or a
    ``[...]`` class is not a valid one. The matcher runs in linear time (RE2), so
    ``*a*a*a*a*b`` over a long name is as cheap as ``*.py``.
    """
    if len(pattern) > MAX_GLOB_CHARS:
        raise RetriableError(
            f"Pattern is {len(pattern)} characters; globs stop at {MAX_GLOB_CHARS}"
        )
    sources = []
    for expanded in expand_braces(pattern):
        parts = expanded.split("/")
        if expanded.startswith("/") or ".." in parts or "\x00" in expanded:
            raise RetriableError(f"Pattern '{pattern}' escapes workspace root")
        sources.append(glob_source(expanded))
    try:
        # dot_all: a name may hold a newline, and "**" must still find it.
        return compile_user_regex(
            "|".join(f"(?:{s})" for s in sources), ignore_case=True, dot_all=True
        )
    except RetriableError:
        raise RetriableError(
            f"Invalid glob pattern '{pattern}': check its [...] classes (a range such "
            "as [a-z] must go upwards)"
        ) from None


def _files_under(files: TreeFiles, base: str) -> list[tuple[str, float, int]]:
    """``(key, mtime, size)`` of every regular file under ``base`` (links skipped).

    Walked from directory descriptors opened with ``O_NOFOLLOW``: a directory swapped
    for a link while the walk runs is skipped, never entered.
    """
    found: list[tuple[str, float, int]] = []
    try:
        top = files.open_directory(base.split("/") if base else [])
    except (OSError, RetriableError):
        return found
    stack = [(base, top)]
    while stack:
        key, fd = stack.pop()
        try:
            with os.scandir(fd) as listing:
                entries = list(listing)
            for e in entries:
                try:
                    info = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                mode = info.st_mode
                child = f"{key}/{e.name}" if key else e.name
                if stat.S_ISREG(mode):
                    found.append((child, info.st_mtime, info.st_size))
                elif stat.S_ISDIR(mode):
                    try:
                        sub = os.open(e.name, _DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        continue  # turned into a link, or vanished: not entered
                    stack.append((child, sub))
        except OSError:
            pass
        finally:
            os.close(fd)
    found.sort(key=lambda item: (-item[1], item[0]))
    return found


def _relative(key: str, base: str) -> str:
    return key[len(base) + 1 :] if base else key


def render_glob(files: TreeFiles, pattern: str, base: str, max_results: int) -> str:
    """Files under ``base`` matching ``pattern``, newest first, capped."""
    matcher = checked_patterns(pattern)
    if files.entry(base).kind != "dir":
        raise RetriableError(f"Directory not found: {base or '.'}")
    matched = [
        key for key, _, _ in _files_under(files, base) if matcher.fullmatch(_relative(key, base))
    ]
    if not matched:
        return "No files found."
    # Names are whatever sandboxed code chose: escaped like every other listing.
    text = "\n".join(shown_name(key) for key in matched[:max_results])
    if len(matched) > max_results:
        text += f"\n[... truncated: {len(matched)} total, showing first {max_results} ...]"
    return text


# ---------------------------------------------------------------- grep


def _literal(pattern: str) -> bytes | None:
    """The UTF-8 bytes every matching file must contain, when ``pattern`` is a plain word."""
    if not pattern or any(c in _REGEX_META for c in pattern) or "\ufffd" in pattern:
        return None
    return pattern.encode("utf-8")


def render_grep(
    files: TreeFiles, pattern: str, base: str, include: str, max_results: int, max_line: int
) -> str:
    """``<path>:<line>: <text>`` for matching lines, newest files first, one global cap.

    The search stops at the first match past the cap, whatever the number of files.
    """
    # RE2 (akgentic.tool.user_regex): linear time, so a hostile pattern cannot stall
    # the process; it searches the file's UTF-8 bytes, never re-encoding per match.
    regex = compile_user_regex(pattern)
    anchored = any(anchor in pattern for anchor in ("\\A", "\\Z", "\\z"))
    whole = None if anchored else compile_user_regex(pattern, multiline=True)
    includes = checked_patterns(include) if include else None
    literal = _literal(pattern)
    kind = files.entry(base).kind
    if kind == "file":
        candidates = [(base, 0.0, 0)]
        base_dir = base.rsplit("/", 1)[0] if "/" in base else ""
    elif kind == "dir":
        candidates = _files_under(files, base)
        base_dir = base
    else:
        raise RetriableError(f"Directory not found: {base or '.'}")
    out: list[str] = []
    more = False
    directories = _Directories(files)
    try:
        for key, _, size in candidates:
            parent, _, name = key.rpartition("/")
            if STAGING_PATTERN.match(name) or size > MAX_FILE_BYTES:
                continue
            if includes is not None:
                rel = _relative(key, base_dir)
                if not (includes.fullmatch(rel) or includes.fullmatch(name)):
                    continue
            data = directories.read(parent, name)
            if data is None or data.find(b"\x00", 0, 8192) >= 0:
                continue
            if literal is not None and literal not in data:
                continue
            text = _utf8(data)
            if whole is not None and b"\r" not in text and whole.search(text) is None:
                continue  # (with \r endings, "$" of the whole text misses; lines decide)
            wanted = max_results - len(out) + 1
            for number, raw in _matching_lines(text, regex, whole, wanted):
                if len(out) == max_results:
                    more = True
                    break
                line = raw.decode("utf-8")
                shown = line if len(line) <= max_line else f"{line[:max_line]}… [line clipped]"
                out.append(f"{shown_name(key)}:{number}: {shown}")
            if more:
                break
    finally:
        directories.close()
    if not out:
        return "No matches found."
    rendered = "\n".join(out)
    if more:
        rendered += (
            f"\n[... truncated: showing the first {max_results} matches; there are more — "
            "narrow the pattern, path or include ...]"
        )
    return rendered


class _Directories:
    """Directory descriptors by key for one search, a bounded number kept open."""

    _KEEP = 64

    def __init__(self, files: TreeFiles) -> None:
        self.files = files
        self._open: dict[str, int] = {}

    def read(self, parent: str, name: str) -> bytes | None:
        """A regular file's bytes, opened without following links; None when not one."""
        fd = self._open.get(parent)
        if fd is None:
            try:
                fd = self.files.open_directory(parent.split("/") if parent else [])
            except (OSError, RetriableError):
                return None
            if len(self._open) >= self._KEEP:
                os.close(self._open.pop(next(iter(self._open))))
            self._open[parent] = fd
        try:
            handle = os.open(name, _FILE_FLAGS, dir_fd=fd)
        except OSError:
            return None
        try:
            info = os.fstat(handle)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None
            if info.st_size < (1 << 20):
                return os.read(handle, info.st_size + 1)
            return _read_all(handle)
        finally:
            os.close(handle)

    def close(self) -> None:
        """Close every descriptor still open."""
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _utf8(data: bytes) -> bytes:
    """``data`` as valid UTF-8: undecodable bytes become U+FFFD, as a reader shows them."""
    if data.isascii():
        return data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace").encode("utf-8")
    return data


def _matching_lines(
    text: bytes, regex: UserRegex, whole: UserRegex | None, limit: int
) -> list[tuple[int, bytes]]:
    """``(line number, line)`` of the first ``limit`` lines ``regex`` matches, in order.

    With plain ``\\n`` endings the whole-text matches point at the candidate lines, so
    only those lines are checked; otherwise every line is.
    """
    found: list[tuple[int, bytes]] = []
    if whole is None or b"\r" in text:
        lines = _BYTE_LINE_BREAK.split(text) if b"\r" in text else text.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for n, line in enumerate(lines, 1):
            if regex.search(line) is not None:
                found.append((n, line))
                if len(found) >= limit:
                    break
        return found
    number, counted_to, pos = 1, 0, 0
    while pos < len(text):
        match = whole.search(text, pos)
        if match is None:
            break
        line_start = text.rfind(b"\n", 0, match[0]) + 1
        if match[0] == len(text):
            break
        number += text.count(b"\n", counted_to, line_start)
        counted_to = line_start
        end = text.find(b"\n", line_start)
        line = text[line_start : end if end >= 0 else len(text)]
        if regex.search(line) is not None:
            found.append((number, line))
            if len(found) >= limit:
                break
        pos = end + 1 if end >= 0 else len(text)
    return found
