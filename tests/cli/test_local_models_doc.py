"""Every ``akgentic run --model ... --base-url ...`` line of docs/local-models.md really runs.

The server the line names is replaced by the scripted server (same protocol); the
rest of the line (card, model, options) is run as written, with one ``--send``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer

Run = Callable[..., subprocess.CompletedProcess[str]]
ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "local-models.md"
_LOCAL_URL = re.compile(r"^http://127\.0\.0\.1:\d+/v1$")


def run_lines() -> list[str]:
    lines = [ln.strip() for ln in PAGE.read_text(encoding="utf-8").splitlines()]
    return sorted({ln for ln in lines if ln.startswith("akgentic run ") and "--model" in ln})


def test_the_page_shows_run_lines_for_each_server() -> None:
    ports = {re.search(r":(\d+)/v1", line).group(1) for line in run_lines()}  # type: ignore[union-attr]
    assert {"8080", "11434", "8000"} <= ports


@pytest.mark.parametrize("line", run_lines())
def test_the_documented_run_line_runs(
    line: str, run_module: Run, demo_server: ScriptedLLMServer
) -> None:
    args = shlex.split(line)[2:]
    url_at = args.index("--base-url") + 1
    assert _LOCAL_URL.match(args[url_at]), args[url_at]
    args[url_at] = demo_server.base_url
    args = [str(ROOT / a) if a.endswith(".yaml") else a for a in args]
    done = run_module("akgentic.cli.run_cmd", "run", *args, "--send", "Why are octopuses odd?")
    assert done.returncode == 0, done.stderr
    assert "@Manager → @Human (response): Here is what" in done.stdout
    model = args[args.index("--model") + 1].partition(":")[2]
    assert {body["model"] for body in demo_server.requests} == {model}
