"""docs/commands.md: its code runs and its example lines produce the results it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from akgentic.tool.commands import CommandRegistry

DOC = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _examples() -> list[tuple[str, str]]:
    [table] = _blocks("text")
    pairs = [line.split("=>", 1) for line in table.splitlines() if "=>" in line]
    return [(line.strip(), result.strip()) for line, result in pairs]


@pytest.fixture(scope="module")
def namespace() -> dict[str, object]:
    scope: dict[str, object] = {"__name__": "commands_doc"}
    for block in _blocks("python"):
        exec(compile(block, str(DOC), "exec"), scope)
    return scope


def test_doc_python_blocks_build_a_registry(namespace: dict[str, object]) -> None:
    registry = namespace["registry"]
    assert isinstance(registry, CommandRegistry)
    assert registry.names() == ["hire_member", "hire_members", "set_mode", "post", "forget"]


def test_doc_has_example_lines() -> None:
    assert len(_examples()) >= 15


@pytest.mark.parametrize(("line", "expected"), _examples())
def test_doc_example_line_gives_the_documented_result(
    namespace: dict[str, object], line: str, expected: str
) -> None:
    registry = namespace["registry"]
    assert isinstance(registry, CommandRegistry)
    assert str(registry.dispatch(line)) == expected
