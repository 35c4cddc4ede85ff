"""The two splitters: Markdown blocks (Markdown and extracted documents) and whole lines.

Both return :class:`Piece` objects holding offsets into the indexed text, their line
range (1-based, inclusive, line breaks ``\\r\\n``, ``\\r``, ``\\n``) and a heading path.
Neither ever returns a piece longer than the hard ceiling: a boundary-free run is cut
at the last whitespace in the window's last 20 %, else at the ceiling itself.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

__all__ = [
    "MAX_CHUNKS_PER_FILE",
    "SPLITTER_VERSION",
    "Piece",
    "SplitConfig",
    "compose",
    "split_lines",
    "split_markdown",
]

MAX_CHUNKS_PER_FILE = 5000
#: Bumped whenever a change here moves a chunk boundary, heading path or line range.
SPLITTER_VERSION = "rag-split-1"
_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SplitConfig:
    """The chunking fields of ``WorkspaceRagIndex`` the splitters use."""

    chunk_chars: int = 1200
    overlap_chars: int = 150
    max_chunk_chars: int = 4000
    min_chunk_chars: int = 200


@dataclass
class Piece:
    """One chunk: ``text[start:end]``, its lines, its heading path, a header context."""

    start: int
    end: int
    start_line: int
    end_line: int
    heading_path: list[str] = field(default_factory=list)
    context: str = ""


class _Lines:
    """Offset -> 1-based line number, for any of the three line breaks."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]
        self.text = text

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span(self, start: int, end: int) -> tuple[int, int]:
        last = max(start, end - 1)
        while last > start and self.text[last] in "\r\n":
            last -= 1
        return self.line_of(start), self.line_of(last)


def _cut(text: str, start: int, end: int, ceiling: int) -> list[tuple[int, int]]:
    """``[start, end)`` in windows of at most ``ceiling`` chars, preferring whitespace."""
    out: list[tuple[int, int]] = []
    while end - start > ceiling:
        window_end = start + ceiling
        floor = start + int(ceiling * 0.8)
        cut = window_end
        for i in range(window_end - 1, floor - 1, -1):
            if text[i].isspace():
                cut = i + 1
                break
        out.append((start, cut))
        start = cut
    if end > start:
        out.append((start, end))
    return out


def _line_units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The lines of ``text[start:end]`` as (start, end) offsets including their break."""
    units: list[tuple[int, int]] = []
    pos = start
    for match in _BREAK.finditer(text, start, end):
        units.append((pos, match.end()))
        pos = match.end()
    if pos < end:
        units.append((pos, end))
    return units


def _pack(
    text: str,
    units: list[tuple[int, int]],
    config: SplitConfig,
    lines: _Lines,
    heading: list[str],
    *,
    prefer_blank: bool,
) -> list[Piece]:
    """Pack consecutive units up to ``chunk_chars``; overlap = trailing whole units."""
    ceiling = config.max_chunk_chars
    flat: list[tuple[int, int]] = []
    for a, b in units:
        flat.extend(_cut(text, a, b, ceiling) if b - a > ceiling else [(a, b)])
    pieces: list[Piece] = []
    i = 0
    while i < len(flat):
        j = i
        size = 0
        last_blank = -1
        while j < len(flat):
            width = flat[j][1] - flat[j][0]
            if j > i and size + width > config.chunk_chars:
                break
            if size + width > ceiling:
                break
            size += width
            if prefer_blank and not text[flat[j][0] : flat[j][1]].strip():
                last_blank = j
            j += 1
        if (
            prefer_blank
            and j < len(flat)
            and last_blank > i
            and (flat[last_blank][1] - flat[i][0] >= config.chunk_chars // 2)
        ):
            j = last_blank + 1
        a, b = flat[i][0], flat[j - 1][1]
        first, last = lines.span(a, b)
        pieces.append(Piece(a, b, first, last, list(heading)))
        if j >= len(flat):
            break
        back = j
        if config.overlap_chars > 0:
            budget = config.overlap_chars
            while back - 1 > i and flat[j - 1][1] - flat[back - 1][0] <= budget:
                back -= 1
        i = back if back < j else j
    return pieces


def split_lines(text: str, config: SplitConfig, *, csv: bool = False) -> list[Piece]:
    """Whole lines up to ``chunk_chars``, preferring blank lines; no heading path."""
    if not text:
        return []
    lines = _Lines(text)
    units = _line_units(text, 0, len(text))
    pieces = _pack(text, units, config, lines, [], prefer_blank=True)
    if csv and units:
        header = text[units[0][0] : units[0][1]].rstrip("\r\n")[: config.max_chunk_chars // 4]
        for piece in pieces:
            if piece.start > 0:
                piece.context = header
    return pieces[:MAX_CHUNKS_PER_FILE]


def _blocks(text: str) -> list[tuple[str, int, int, int, str]]:
    """Top-level blocks of ``text`` as (kind, level, start line0, end line0, heading text)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    blocks: list[tuple[str, int, int, int, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.level == 0 and token.map is not None:
            kind = token.type
            title = ""
            level = 0
            if kind == "heading_open":
                level = int(token.tag[1:])
                inline = tokens[i + 1] if i + 1 < len(tokens) else None
                title = inline.content.strip() if inline is not None else ""
            blocks.append((kind, level, token.map[0], token.map[1], title))
        i += 1
    return blocks


def split_markdown(text: str, config: SplitConfig) -> list[Piece]:
    """Markdown blocks, never across a heading, atomic tables/code/HTML/lists when they fit."""
    if not text:
        return []
    lines = _Lines(text)
    starts = [*lines.starts, len(text)]
    n_lines = len(lines.starts)

    def offset(line0: int) -> int:
        return starts[min(line0, n_lines)]

    sections: list[tuple[list[str], list[tuple[int, int, str]]]] = []
    path: list[tuple[int, str]] = []
    current: list[tuple[int, int, str]] = []
    sections.append(([], current))
    for kind, level, a, b, title in _blocks(text):
        start, end = offset(a), offset(b)
        if kind == "heading_open":
            path = [p for p in path if p[0] < level] + [(level, title)]
            current = []
            sections.append(([t for _, t in path], current))
        current.append((start, end, kind))
    pieces: list[Piece] = []
    for heading, blocks in sections:
        if not blocks:
            continue
        section = _pack_blocks(text, blocks, config, lines, heading)
        pieces.extend(_merge_small(section, config, lines))
    return pieces[:MAX_CHUNKS_PER_FILE]


def _pack_blocks(
    text: str,
    blocks: list[tuple[int, int, str]],
    config: SplitConfig,
    lines: _Lines,
    heading: list[str],
) -> list[Piece]:
    units: list[tuple[int, int]] = []
    table_header: dict[int, str] = {}
    for start, end, kind in blocks:
        if end - start <= config.max_chunk_chars:
            units.append((start, end))
            continue
        # An oversized block is cut at line boundaries (tables keep their header rows).
        inner = _line_units(text, start, end)
        if kind == "table_open" and len(inner) > 2:
            header = text[inner[0][0] : inner[1][1]]
            groups = _group(inner[2:], config.max_chunk_chars - len(header))
            units.append((inner[0][0], groups[0][1]))
            for a, b in groups[1:]:
                table_header[a] = header.rstrip("\r\n")
                units.append((a, b))
        else:
            units.extend(_group(inner, config.max_chunk_chars))
    pieces = _pack(text, units, config, lines, heading, prefer_blank=False)
    for piece in pieces:
        if piece.start in table_header:
            piece.context = table_header[piece.start]
    return pieces


def _group(units: list[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
    """Consecutive units joined while they fit ``budget`` (a unit alone may exceed it)."""
    out: list[tuple[int, int]] = []
    for a, b in units:
        if out and b - out[-1][0] <= budget:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _merge_small(pieces: list[Piece], config: SplitConfig, lines: _Lines) -> list[Piece]:
    """A piece under ``min_chunk_chars`` merges forward within its section, under the ceiling."""
    out: list[Piece] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        while (
            piece.end - piece.start < config.min_chunk_chars
            and i + 1 < len(pieces)
            and pieces[i + 1].end - piece.start <= config.max_chunk_chars
            and not pieces[i + 1].context
        ):
            nxt = pieces[i + 1]
            first, last = lines.span(piece.start, nxt.end)
            piece = Piece(piece.start, nxt.end, first, last, piece.heading_path, piece.context)
            i += 1
        out.append(piece)
        i += 1
    return out


def compose(text: str, piece: Piece, *, prepend_heading_path: bool, max_chars: int) -> str:
    """The text embedded and stored: heading path, header context, then the slice."""
    body = text[piece.start : piece.end]
    if piece.context:
        body = piece.context + "\n" + body
    if prepend_heading_path and piece.heading_path:
        body = " > ".join(piece.heading_path) + "\n\n" + body
    return body[:max_chars] if max_chars > 0 else body
