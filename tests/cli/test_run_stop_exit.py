"""``akgentic run`` ends soon after "stopped and saved", even when the model never answers."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.cli.demo_cmd import DEMO_CARD
from akgentic.llm.scripted_server import ScriptedLLMServer, hang
from akgentic.testing.waiting import poll_until

RUN = "akgentic.cli.run_cmd"
STOPPED = re.compile(r"team [0-9a-f-]{36} stopped and saved")
_DEMO_MODEL_LINE = "model_cfg: {provider: openai, model: gpt-4.1-mini}"
#: A hang guard only: a process still alive this long after the stop is the bug itself.
EXIT_GUARD = 60.0


@pytest.fixture
def hung_server() -> Iterator[ScriptedLLMServer]:
    """A model server that accepts every request and never answers it."""
    with ScriptedLLMServer(fallback=hang()) as server:
        yield server


SEND = ("--send", "Why are octopuses odd?", "--timeout", "1")


def _card(tmp_path: Path, server: ScriptedLLMServer) -> Path:
    inline = (
        f"model_cfg: {{provider: openai-chat, model: {server.model}, "
        f"base_url: '{server.base_url}', api_key: scripted}}"
    )
    path = tmp_path / "team.yaml"
    path.write_text(DEMO_CARD.read_text().replace(_DEMO_MODEL_LINE, inline))
    return path


def test_the_process_exits_after_stop_while_its_model_request_hangs(
    cli_env: dict[str, str], tmp_path: Path, hung_server: ScriptedLLMServer
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", RUN, "run", str(_card(tmp_path, hung_server)), *SEND],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env,
        cwd=tmp_path,
    )
    try:
        out, err = child.communicate(timeout=EXIT_GUARD)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate(timeout=10)
        pytest.fail(f"akgentic run still alive {EXIT_GUARD} s on:\n{out}\n{err}")
    assert STOPPED.search(out), f"{out}\n{err}"
    assert poll_until(lambda: len(hung_server.requests) >= 1, timeout=1)
    assert len(hung_server.requests) == 1, "the stopped team went on asking the model"
    assert "Force-stopping" not in err, err
