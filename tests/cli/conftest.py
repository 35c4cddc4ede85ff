"""Fixtures for the command-line tests: real subprocesses, a scripted model, temp stores."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from akgentic.cli.demo_cmd import DEMO_CARD, DemoScript
from akgentic.llm.scripted_server import ScriptedLLMServer

Run = Callable[..., subprocess.CompletedProcess[str]]

_MODEL_LINE = "model_cfg: {provider: openai, model: gpt-4.1-mini}"


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """A child environment with no model configured and the default store under tmp_path."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AKGENTIC_MODEL", "AKGENTIC_PATH")
    }
    env["AKGENTIC_STORE"] = f"sqlite:///{tmp_path}/cli.db"
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("ORCHESTRATOR_TIMEOUT_DELAY", None)
    return env


@pytest.fixture
def run_module(cli_env: dict[str, str], tmp_path: Path) -> Run:
    """``run_module(module, *args, stdin=..., env=...)``: ``python -m module args`` in tmp_path."""

    def run(
        module: str,
        *args: str,
        stdin: str = "",
        env: dict[str, str] | None = None,
        timeout: float = 90,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", module, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**cli_env, **(env or {})},
            cwd=tmp_path,
            timeout=timeout,
        )

    return run


@pytest.fixture
def demo_server() -> Iterator[ScriptedLLMServer]:
    """A scripted server answering every request with the demo's rule-based model."""
    with ScriptedLLMServer(fallback=DemoScript("@Human", "Researcher")) as server:
        yield server


@pytest.fixture
def demo_card_file(tmp_path: Path, demo_server: ScriptedLLMServer) -> Path:
    """The demo card with every agent's model pointing at ``demo_server``."""
    inline = (
        f"model_cfg: {{provider: openai-chat, model: {demo_server.model}, "
        f"base_url: '{demo_server.base_url}', api_key: scripted}}"
    )
    text = DEMO_CARD.read_text()
    assert text.count(_MODEL_LINE) == 2
    path = tmp_path / "team.yaml"
    path.write_text(text.replace(_MODEL_LINE, inline))
    return path
