"""docs/workspace.md: every Python block runs and prints what its trailing comments say."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "workspace.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)


def expected_output(block: str) -> str:
    lines = block.rstrip().splitlines()
    tail: list[str] = []
    while lines and lines[-1].startswith("# "):
        tail.insert(0, lines.pop()[2:])
    return "\n".join(tail)


def test_the_doc_has_python_examples() -> None:
    assert len(BLOCKS) == 3
    assert all(expected_output(block) for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=["gate", "retrieval", "recipes"])
def test_each_python_example_prints_its_documented_output(block: str) -> None:
    if "workspace_rag" in block and importlib.util.find_spec("markitdown") is None:
        pytest.skip('the retrieval example indexes a PDF: pip install "akgentic-workspace[docs]"')
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, str(DOC), "exec"), {})
    assert printed.getvalue().strip() == expected_output(block)


def test_the_documented_refusal_is_what_the_gate_says() -> None:
    from akgentic_workspace import WorkspaceTool

    from akgentic.tool.core.factory import ToolFactory
    from akgentic.tool.errors import RetriableError
    from akgentic.tool.testing import RecordingObserver

    documented = re.search(r"```text\n(Refused to modify.*?)```", DOC.read_text("utf-8"), re.S)
    assert documented is not None
    writer, reviewer = RecordingObserver(name="@Writer"), RecordingObserver(name="@Reviewer")
    cards = [WorkspaceTool(workspace_id="refusal", git_journal=True) for _ in range(2)]
    ToolFactory([cards[0]], observer=writer)
    ToolFactory([cards[1]], observer=reviewer)
    w = {tool.__name__: tool for tool in cards[0].get_tools()}
    r = {tool.__name__: tool for tool in cards[1].get_tools()}
    w["workspace_write"]("notes.md", "draft\n")
    r["workspace_read"]("notes.md")
    r["workspace_edit"]("notes.md", "draft", "reviewed")
    with pytest.raises(RetriableError) as refused:
        w["workspace_write"]("notes.md", "final\n")
    assert str(refused.value) == documented.group(1).strip()
