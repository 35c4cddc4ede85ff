"""Every lint or type-check exception in the code says what it silences and why.

A ``# noqa`` names its ruff code(s) and gives a reason: ``# noqa: N818 - the contract's
public name`` (the file-level ``# ruff: noqa: CODES - reason`` likewise); a
``# type: ignore`` names its mypy code: ``# type: ignore[attr-defined]``. A bare one
would hide whatever else goes wrong on its line, and its reason would be lost.

Comments are read with :mod:`tokenize`, so pragmas quoted in strings (as in this file)
do not count. The checks are run on bad samples too, so a checker that stopped seeing
pragmas would fail here rather than pass everything.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("akgentic", "plugins", "tests", "bench", "scripts", "examples")

_PRAGMA = re.compile(r"\bnoqa\b|\btype:\s*ignore\b", re.IGNORECASE)
_CODES = r"[A-Z]+[0-9]+(?:,\s*[A-Z]+[0-9]+)*"
# Matched from where the pragma starts: codes, then " - " and a reason.
_GOOD_NOQA = re.compile(rf"noqa: {_CODES} - \S")
_GOOD_IGNORE = re.compile(r"type: ignore\[[a-z-]+(?:, *[a-z-]+)*\]")


def unexplained(comment: str) -> list[str]:
    """The pragmas of one comment that lack a code (or, for noqa, a reason)."""
    bad = []
    for match in _PRAGMA.finditer(comment):
        rest = comment[match.start() :]
        good = _GOOD_NOQA if match.group().lower() == "noqa" else _GOOD_IGNORE
        if not good.match(rest):
            bad.append(rest)
    return bad


def pragma_problems(source: str) -> list[tuple[int, str]]:
    """(line, comment) for each comment of ``source`` holding an unexplained pragma."""
    if not _PRAGMA.search(source):
        return []
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [
        (token.start[0], token.string)
        for token in tokens
        if token.type == tokenize.COMMENT and unexplained(token.string)
    ]


def python_files(root: Path) -> list[Path]:
    """The .py files under the scanned folders of ``root``, outside hidden ones (.venv)."""
    files = []
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*.py")):
            if not any(part.startswith(".") for part in path.relative_to(root).parts):
                files.append(path)
    return files


def problems_under(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root)}:{line}: {comment}"
        for path in python_files(root)
        for line, comment in pragma_problems(path.read_text(encoding="utf-8"))
    ]


def test_every_lint_exception_names_its_code_and_says_why() -> None:
    problems = problems_under(ROOT)
    assert problems == [], "write `# noqa: CODE - reason` / `# type: ignore[code]`:\n" + (
        "\n".join(problems)
    )


def test_the_check_sees_files_of_each_scanned_folder() -> None:
    seen = {path.relative_to(ROOT).parts[0] for path in python_files(ROOT)}
    assert seen == set(SCANNED)


def test_bare_or_unexplained_pragmas_are_reported() -> None:
    for comment in (
        "# noqa",
        "# NOQA",
        "# noqa: F401",
        "# noqa:F401 - reason",
        "# noqa: F401 (a reason, but not after ' - ')",
        "# noqa: F401 -",
        "# ruff: noqa",
        "# ruff: noqa: E402",
        "# flake8: noqa",
        "# type: ignore",
        "# type: ignore  # noqa: F401 - the noqa is fine, the ignore is not",
        "# type: ignore[attr-defined]  # noqa: F821",
    ):
        assert unexplained(comment), comment


def test_explained_pragmas_pass() -> None:
    for comment in (
        "# noqa: N818 - the contract's public name",
        "# noqa: E402, I001 - the guide's block is kept as written",
        "# ruff: noqa: E402, I001 - the guide's block is kept as written",
        "# type: ignore[attr-defined]",
        "# type: ignore[name-defined]  # noqa: F821 - the annotation must not resolve",
        "# type: ignore[arg-type, return-value]",
        "# a comment that mentions neither",
    ):
        assert unexplained(comment) == [], comment


def test_only_comments_are_read_and_hidden_folders_are_skipped(tmp_path: Path) -> None:
    for folder in SCANNED:
        (tmp_path / folder).mkdir()
    (tmp_path / "tests" / "bad.py").write_text(
        'TEXT = "# noqa"  # a string is not a pragma\nimport os  # noqa\n', encoding="utf-8"
    )
    (tmp_path / "plugins" / ".venv").mkdir()
    (tmp_path / "plugins" / ".venv" / "vendored.py").write_text(
        "import os  # noqa\n", encoding="utf-8"
    )
    assert problems_under(tmp_path) == ["tests/bad.py:2: # noqa"]
