"""The splitters: the hard ceiling, headings only from Markdown, line ranges, identity."""

from __future__ import annotations

import itertools
import json
import random

from akgentic_workspace.rag.policy import chunk_id, row_id
from akgentic_workspace.rag.split import SplitConfig, split_lines, split_markdown

CONFIG = SplitConfig()


def test_two_megabytes_of_minified_json_never_exceed_the_ceiling() -> None:
    rng = random.Random(7)
    data = [{"id": i, "name": "x" * rng.randint(1, 40), "tags": ["a", "b"]} for i in range(40_000)]
    text = json.dumps(data, separators=(",", ":"))
    assert len(text) > 2_000_000 and "\n" not in text
    pieces = split_lines(text, CONFIG)
    assert len(pieces) > 400
    assert max(p.end - p.start for p in pieces) <= CONFIG.max_chunk_chars
    assert pieces[0].start == 0 and pieces[-1].end == len(text)
    assert all(a.end == b.start for a, b in itertools.pairwise(pieces))


def test_a_python_comment_is_not_a_heading() -> None:
    code = "# A comment\nimport os\n\n\ndef f():\n    # another\n    return os.sep\n"
    pieces = split_lines(code, CONFIG)
    assert pieces and all(p.heading_path == [] for p in pieces)
    assert (pieces[0].start_line, pieces[-1].end_line) == (1, 7)


def test_markdown_chunks_carry_their_heading_path_and_lines() -> None:
    text = "# Invoice\n\n## Payment terms\n\n### Late fees\n\nA 2 % penalty per month.\n"
    pieces = split_markdown(text, CONFIG)
    last = pieces[-1]
    assert last.heading_path == ["Invoice", "Payment terms", "Late fees"]
    assert "penalty" in text[last.start : last.end]
    assert last.end_line == 7


def test_no_markdown_chunk_crosses_a_heading_or_the_ceiling() -> None:
    body = "\n\n".join("word " * 100 for _ in range(30))
    text = f"# One\n\n{body}\n\n# Two\n\n{'y' * 9000}\n"
    pieces = split_markdown(text, CONFIG)
    assert max(p.end - p.start for p in pieces) <= CONFIG.max_chunk_chars
    for piece in pieces:
        chunk = text[piece.start : piece.end]
        assert not ("# One" in chunk and "# Two" in chunk)
    assert {tuple(p.heading_path) for p in pieces} == {("One",), ("Two",)}


def test_an_oversized_table_repeats_its_header() -> None:
    rows = "\n".join(f"| {i} | {'v' * 50} |" for i in range(200))
    text = f"# T\n\n| k | v |\n| --- | --- |\n{rows}\n"
    pieces = split_markdown(text, CONFIG)
    assert len(pieces) > 2
    assert all(p.end - p.start <= CONFIG.max_chunk_chars for p in pieces)
    assert any(p.context.startswith("| k | v |") for p in pieces[1:])


def test_chunk_ids_are_the_specs_check_values() -> None:
    cid = chunk_id("s", "a.md", "x", "f", 0)
    assert cid == "9059e917-58c3-5602-8832-fb87dd61b5b3"
    assert row_id(None, cid) == "11ac0649-df12-55b6-a639-6ec239328449"


def test_empty_text_gives_no_chunks() -> None:
    assert split_lines("", CONFIG) == [] and split_markdown("", CONFIG) == []
