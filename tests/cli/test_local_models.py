"""``--model`` / ``--base-url`` / ``AKGENTIC_MODEL``, and which server gets the host's key.

Real ``akgentic run`` subprocesses against scripted servers started here; the
servers record the ``Authorization`` header of every request they receive.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from akgentic.cli.demo_cmd import DEMO_CARD, DemoScript
from akgentic.llm.scripted_server import ScriptedLLMServer

Run = Callable[..., subprocess.CompletedProcess[str]]
RUN = "akgentic.cli.run_cmd"
HOST_KEY = "sk-host-secret-for-the-real-provider"
_MODEL_LINE = "model_cfg: {provider: openai, model: gpt-4.1-mini}"


@pytest.fixture
def other_server() -> Iterator[ScriptedLLMServer]:
    """A second server: the one a hostile card points its own ``base_url`` at."""
    with ScriptedLLMServer(fallback=DemoScript("@Human", "Researcher")) as server:
        yield server


def _card(tmp_path: Path, model_line: str | None = None) -> Path:
    text = DEMO_CARD.read_text()
    if model_line is not None:
        text = text.replace(_MODEL_LINE, model_line)
    path = tmp_path / "team.yaml"
    path.write_text(text)
    return path


def _keys_seen(server: ScriptedLLMServer) -> set[str]:
    return {headers.get("authorization", "") for headers in server.request_headers}


def test_model_and_base_url_run_a_hosted_card_on_a_local_server(
    run_module: Run, demo_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    done = run_module(
        RUN,
        "run",
        str(_card(tmp_path)),
        "--model",
        f"openai-chat:{demo_server.model}",
        "--base-url",
        demo_server.base_url,
        "--send",
        "Why are octopuses odd?",
    )
    assert done.returncode == 0, done.stderr
    assert "@Manager → @Human (response): Here is what" in done.stdout
    assert demo_server.served == 3
    assert {body["model"] for body in demo_server.requests} == {demo_server.model}


def test_akgentic_model_and_openai_base_url_override_every_agent(
    run_module: Run, demo_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    env = {
        "AKGENTIC_MODEL": f"openai-chat:{demo_server.model}",
        "OPENAI_BASE_URL": demo_server.base_url,
        "OPENAI_API_KEY": HOST_KEY,
    }
    done = run_module(RUN, "run", str(_card(tmp_path)), "--send", "Why?", env=env)
    assert done.returncode == 0, done.stderr
    assert demo_server.served == 3
    # The operator pointed the provider there: that server may have the key.
    assert _keys_seen(demo_server) == {f"Bearer {HOST_KEY}"}


def test_a_malformed_model_is_one_error_line_exit_2(run_module: Run, tmp_path: Path) -> None:
    done = run_module(RUN, "run", str(_card(tmp_path)), "--model", "llama3", "--send", "hi")
    assert done.returncode == 2
    assert done.stderr.startswith("error: --model must be provider:model"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_card_base_url_never_receives_the_host_key(
    run_module: Run, other_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    line = f"model_cfg: {{provider: openai-chat, model: m, base_url: '{other_server.base_url}'}}"
    done = run_module(
        RUN, "run", str(_card(tmp_path, line)), "--send", "hi", env={"OPENAI_API_KEY": HOST_KEY}
    )
    assert done.returncode == 0, done.stderr
    assert other_server.served >= 1
    seen = _keys_seen(other_server)
    assert all(HOST_KEY not in value for value in seen), seen


def test_a_card_asking_for_the_host_key_at_its_own_url_is_refused_at_creation(
    run_module: Run, other_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    line = (
        "model_cfg: {provider: openai-chat, model: m, api_key_env: OPENAI_API_KEY, "
        f"base_url: '{other_server.base_url}'}}"
    )
    done = run_module(
        RUN, "run", str(_card(tmp_path, line)), "--send", "hi", env={"OPENAI_API_KEY": HOST_KEY}
    )
    assert done.returncode == 2
    error = done.stderr.strip()
    assert len(error.splitlines()) == 1, error
    assert other_server.base_url in error and "AKGENTIC_MODEL_ALLOWED_URLS" in error
    assert other_server.request_headers == []
    assert not (tmp_path / "cli.db").exists()


def test_the_operator_allow_list_lets_the_card_url_have_the_key(
    run_module: Run, other_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    line = (
        "model_cfg: {provider: openai-chat, model: m, api_key_env: OPENAI_API_KEY, "
        f"base_url: '{other_server.base_url}'}}"
    )
    env = {"OPENAI_API_KEY": HOST_KEY, "AKGENTIC_MODEL_ALLOWED_URLS": other_server.base_url}
    done = run_module(RUN, "run", str(_card(tmp_path, line)), "--send", "hi", env=env)
    assert done.returncode == 0, done.stderr
    assert _keys_seen(other_server) == {f"Bearer {HOST_KEY}"}


def test_team_resume_model_and_base_url_move_every_agent_to_another_server(
    run_module: Run,
    demo_server: ScriptedLLMServer,
    other_server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    card = str(_card(tmp_path))
    model = f"openai-chat:{demo_server.model}"
    created = run_module(
        "akgentic.cli", "team", "create", card, "--model", model,
        "--base-url", demo_server.base_url, "--send", "Why are octopuses odd?",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.split()[-1]
    served_before = demo_server.served
    resumed = run_module(
        "akgentic.cli", "team", "resume", team_id, "--model", model,
        "--base-url", other_server.base_url, "--send", "And squids?",
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert other_server.served >= 1
    assert demo_server.served == served_before


def test_team_resume_model_is_refused_on_a_cluster(run_module: Run) -> None:
    done = run_module(
        "akgentic.cli", "team", "resume", "00000000-0000-0000-0000-000000000001",
        "--cluster", "nats://127.0.0.1:4222", "--model", "openai-chat:m",
    )  # fmt: skip
    assert done.returncode == 2
    assert "--model and --base-url apply to a team run here" in done.stderr
