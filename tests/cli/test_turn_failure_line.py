"""``akgentic run`` against a model that fails: one plain line, no traceback, exit code 3."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from akgentic.cli.run_cmd import TURN_FAILED_EXIT
from akgentic.llm.failures import CONTEXT_ADVICE
from akgentic.llm.scripted_server import ScriptedLLMServer, context_length_exceeded, server_error
from akgentic.testing.cards import human_worker_team_yaml

Run = Callable[..., subprocess.CompletedProcess[str]]

CONTEXT = "the prompt (10,119 tokens) exceeds the model's context (2,048)" + CONTEXT_ADVICE


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(fallback=context_length_exceeded(10119, 2048)) as scripted:
        yield scripted


@pytest.fixture
def card(tmp_path: Path, server: ScriptedLLMServer) -> Path:
    path = tmp_path / "faulty.yaml"
    model_cfg = {
        "provider": "openai-chat",
        "model": "m",
        "base_url": server.base_url,
        "api_key": "k",
    }
    card = human_worker_team_yaml(
        "faulty",
        description="One worker on a model server that fails",
        model_cfg=model_cfg,
        runtime_cfg={"http_client_config": {"max_retries": 0}},
    )
    path.write_text(card)
    return path


def test_a_failed_turn_is_one_line_without_traceback_and_exit_code_3(
    run_module: Run, card: Path
) -> None:
    result = run_module("akgentic.cli.run_cmd", "run", str(card), "--send", "Summarise it.")
    assert result.returncode == TURN_FAILED_EXIT, result.stdout + result.stderr
    both = result.stdout + result.stderr
    lines = [line for line in both.splitlines() if CONTEXT in line]
    assert lines == [f"@Worker ✗ turn failed: {CONTEXT}"], both
    assert "Traceback" not in both and "Unhandled exception" not in both
    assert "stopped and saved" in result.stdout


def test_team_create_prints_the_same_line_without_traceback(run_module: Run, card: Path) -> None:
    result = run_module("akgentic.cli", "team", "create", str(card), "--send", "Summarise it.")
    assert result.stderr.splitlines()[-1] == f"@Worker turn failed: {CONTEXT}"
    assert "Traceback" not in result.stderr and "Unhandled exception" not in result.stderr


def test_debug_shows_the_traceback_and_the_line(run_module: Run, card: Path) -> None:
    result = run_module(
        "akgentic.cli.run_cmd", "run", str(card), "--send", "Summarise it.", "--debug"
    )
    assert result.returncode == TURN_FAILED_EXIT
    assert f"@Worker ✗ turn failed: {CONTEXT}" in result.stdout
    assert "Traceback" in result.stderr and "TurnFailedError" in result.stderr


def test_a_turn_that_fails_then_succeeds_exits_0(
    run_module: Run, card: Path, server: ScriptedLLMServer
) -> None:
    server.fallback = '{"messages": []}'
    server.add(server_error(500, "boom"))
    result = run_module(
        "akgentic.cli.run_cmd", "run", str(card), "--send", "One.", "--send", "Two."
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("✗ turn failed:") == 1
    assert "answered HTTP 500: boom" in result.stdout


def test_team_create_and_resume_exit_3_when_the_last_turn_failed(
    run_module: Run, card: Path, server: ScriptedLLMServer
) -> None:
    created = run_module("akgentic.cli", "team", "create", str(card), "--send", "Summarise it.")
    assert created.returncode == TURN_FAILED_EXIT, created.stdout + created.stderr
    team_id = created.stdout.split()[-1]
    resumed = run_module("akgentic.cli", "team", "resume", team_id, "--send", "Again.")
    assert resumed.returncode == TURN_FAILED_EXIT, resumed.stdout + resumed.stderr
    assert resumed.stdout.split()[-1] == team_id  # stopped and saved all the same
    assert f"@Worker ✗ turn failed: {CONTEXT}" in resumed.stderr
    server.fallback = '{"messages": []}'
    recovered = run_module("akgentic.cli", "team", "resume", team_id, "--send", "Once more.")
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr


def test_team_create_debug_shows_the_traceback(run_module: Run, card: Path) -> None:
    result = run_module(
        "akgentic.cli", "team", "create", str(card), "--send", "Summarise it.", "--debug"
    )
    assert result.returncode == TURN_FAILED_EXIT, result.stdout + result.stderr
    assert "Traceback" in result.stderr and "TurnFailedError" in result.stderr
