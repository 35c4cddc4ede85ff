"""docs/writing-plugins.md: its Python blocks run, and its scripted run does what it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from akgentic.plugins import PluginInfo

TUTORIAL = Path(__file__).resolve().parents[3] / "docs" / "writing-plugins.md"
TEXT = TUTORIAL.read_text(encoding="utf-8")
#: Blocks about ``akgentic_review``, a plugin the tutorial imagines, are not run.
PYTHON = [b for b in re.findall(r"```python\n(.*?)```", TEXT, re.S) if "akgentic_review" not in b]
YAML = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", TEXT, re.S)]

Register = Callable[..., PluginInfo]


def _run(block: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "tutorial_block"}
    exec(compile(block, str(TUTORIAL), "exec"), namespace)
    return namespace


def test_the_tutorial_has_the_python_blocks_this_module_runs() -> None:
    assert len(PYTHON) == 6


@pytest.mark.parametrize("index", range(len(PYTHON)))
def test_each_python_block_of_the_tutorial_runs(index: int, register_plugin: Register) -> None:
    block = PYTHON[index]
    if "akgentic.tool import ShoutTool" in block and "ToolFactory" not in block:
        import akgentic_hello.plugin

        register_plugin(akgentic_hello.plugin, "hello")  # the lazy import asks the registry
    namespace = _run(block)
    if "akgentic_cli" in namespace:
        import typer

        app = typer.Typer()
        app.callback()(lambda: None)
        namespace["akgentic_cli"](app)
        assert CliRunner().invoke(app, ["hello", "Ada"]).output.strip() == "Hello, Ada!"
    if "akgentic_tool_cards" in namespace:
        from akgentic_hello.shout import ShoutTool

        [spec] = namespace["akgentic_tool_cards"]()
        assert (spec.name, spec.card, spec.description) == (
            "shout",
            ShoutTool,
            "Shout a text, loudly.",
        )
    if "ShoutTool" in namespace and "akgentic_cli" not in namespace:
        from akgentic_hello.shout import ShoutTool

        assert namespace["ShoutTool"] is ShoutTool
    for name, value in namespace.items():
        if name == "test_hello_greets":
            value(register_plugin)
        elif name.startswith("test_") and callable(value):
            value()
        elif name.startswith("Test"):
            from akgentic.testing import ToolCardContract

            assert issubclass(value, ToolCardContract) and value.card_name == "shout"


def test_the_scripted_run_of_the_tutorial_calls_the_tool(tmp_path: Path) -> None:
    [card] = [data for data in YAML if "entry_point" in data]
    [script] = [data for data in YAML if "members" in data and "entry_point" not in data]
    (tmp_path / "shout-team.yaml").write_text(yaml.safe_dump(card))
    (tmp_path / "shout-script.yaml").write_text(yaml.safe_dump(script))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AKGENTIC_"))}
    env["AKGENTIC_STORE"] = f"sqlite:///{tmp_path}/tutorial.db"
    env["COLUMNS"] = "200"

    def akgentic(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "akgentic.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )

    command = re.search(r"\$ akgentic (run shout-team\.yaml .*)\n", TEXT)
    assert command is not None
    args = re.findall(r'"[^"]*"|\S+', command.group(1))
    done = akgentic(*(a.strip('"') for a in args), "--no-interactive")
    assert done.returncode == 0, done.stderr
    assert "@Human → @Shouter (request): Shout: fire in the hold" in done.stdout
    assert "@Shouter → @Human (response): I shouted it." in done.stdout
    team_id = re.findall(r"akgentic team resume (\S+)", done.stdout)[-1]
    events = akgentic("team", "inspect", team_id, "--events")
    assert events.returncode == 0, events.stderr
    for shown in (
        'tool call shout({"text":"fire in the hold"})',
        "Shouted text=FIRE IN THE HOLD!!",
        "to model: shout returned: FIRE IN THE HOLD!!",
    ):
        assert shown in events.stdout
        assert shown in TEXT  # the tutorial shows what the command prints
