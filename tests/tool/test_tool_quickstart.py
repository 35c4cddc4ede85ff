"""The tool document's Quick Start (docs/tool-quickstart.md, examples/tool_quickstart.py).

The example file runs as a script, in a fresh interpreter with the catalog plugins
installed, and its Quick Start block is the page's first Python block, character for
character. The page's other blocks run too, and its shown output is what the example
prints.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tool-quickstart.md"
EXAMPLE = ROOT / "examples" / "tool_quickstart.py"
PLUGINS = ("akgentic_workspace", "akgentic_planning", "akgentic_search")


def _page_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def _example_block() -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    match = re.search(r"# ---- the guide's Quick Start, unchanged -+\n(.*?)# ---- end", text, re.S)
    assert match, "examples/tool_quickstart.py lost its Quick Start markers"
    return match.group(1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    for plugin in PLUGINS:
        pytest.importorskip(plugin)
    cwd = tmp_path_factory.mktemp("quickstart")
    env = {k: v for k, v in os.environ.items() if k not in ("TAVILY_API_KEY", "OPENAI_API_KEY")}
    env["AKGENTIC_WORKSPACES_ROOT"] = str(cwd / "root")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, cwd


def _line(out: str, label: str) -> list[str]:
    [line] = [row for row in out.splitlines() if row.startswith(f"{label}: ")]
    return line.removeprefix(f"{label}: ").split(", ")


def test_the_example_runs_the_block_of_the_page_unchanged() -> None:
    assert _example_block() == _page_blocks("python")[0]
    assert "factory.get_commands()" in _example_block()


def test_the_example_runs_and_every_card_serves_its_channels(run: Any) -> None:
    done, _ = run
    assert done.returncode == 0, done.stderr
    tools = _line(done.stdout, "tools")
    assert {"workspace_read", "workspace_write", "workspace_rmdir"} <= set(tools)
    assert {"get_planning_task", "update_planning", "search_planning"} <= set(tools)
    assert tools[-3:] == ["web_search", "web_fetch", "web_crawl"]
    assert _line(done.stdout, "context states") == ["planning_state"]
    commands = dict(pair.split("->") for pair in _line(done.stdout, "commands"))
    assert commands["WorkspaceWrite"] == "workspace_write"
    assert commands["GetPlanning"] == "planning_summary"


def test_the_command_wrote_a_real_file_and_the_tool_raised_model_retry(run: Any) -> None:
    done, cwd = run
    assert done.returncode == 0, done.stderr
    [written] = list((cwd / "root").rglob("hello.md"))
    assert written.read_text(encoding="utf-8") == "written by a command\n"
    assert "ModelRetry: File not found: missing.md" in done.stdout
    assert "TAVILY_API_KEY" in done.stderr  # the search card says why it cannot search


def test_the_output_shown_on_the_page_is_what_the_example_prints(run: Any) -> None:
    done, _ = run
    [shown] = _page_blocks("text")
    printed = done.stdout.splitlines()
    for line in shown.splitlines():
        assert line in printed


def test_the_variations_on_the_page_build_their_cards() -> None:
    for plugin in PLUGINS:
        pytest.importorskip(plugin)
    namespace: dict[str, Any] = {"__name__": "tool_quickstart_doc"}
    for block in _page_blocks("python")[1:]:
        exec(compile(block, str(PAGE), "exec", dont_inherit=True), namespace)
    assert namespace["reviewer_workspace"].read_only is True
    assert namespace["planning"].get_planning.filter_by_agent is False
    tools = {t.__name__ for t in namespace["reviewer_workspace"].get_tools()}
    assert "workspace_read" in tools and "workspace_write" not in tools
