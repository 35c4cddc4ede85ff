"""``akgentic demo`` (``make demo``), run as a real subprocess.

What the demo prints is checked here; how long it takes (the spec: under 45 s) is
measured by ``bench/demo.py``. The subprocess timeouts only stop a demo that hangs.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

from akgentic.llm.scripted_server import ScriptedLLMServer

Run = Callable[..., subprocess.CompletedProcess[str]]
DEMO = "akgentic.cli.demo_cmd"
#: Seconds after which a demo is taken to hang (a guard, not a speed bound).
HANG = 600


def test_the_demo_runs_offline_on_a_labelled_scripted_model_and_history_survives_resume(
    run_module: Run,
) -> None:
    done = run_module(DEMO, "demo", timeout=HANG)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "model: scripted model:" in out and "done (scripted model)" in out
    hire = re.search(r"\+ (@Researcher\d+) joined the team as Researcher, started by @Manager", out)
    assert hire is not None, out
    researcher = hire.group(1)
    assert f"@Manager → {researcher} (request): Please look into this for @Human" in out
    assert f"{researcher} → @Manager (response): 1) An octopus has three hearts" in out
    assert f"@Manager → @Human (response): Here is what {researcher} found." in out
    before, _, after = out.partition("3. resume it from the store")
    assert after, out
    assert re.search(r"stopped; \d+ events are in the store", before)
    assert f"members after the resume: @Human, @Manager, {researcher}" in after
    restored = after.split("conversation restored from the store:")[1]
    assert "@Human → @Manager: What makes octopuses such unusual animals?" in restored
    # The answer after the resume can only come from the conversation the model was sent.
    assert (
        '@Manager → @Human (response): From our earlier conversation. You had asked: "What '
        'makes octopuses such unusual animals?" The researcher reported: 1) An octopus'
    ) in after


def test_akgentic_model_replaces_the_cards_model_and_reaches_that_server(
    run_module: Run, demo_server: ScriptedLLMServer
) -> None:
    env = {"AKGENTIC_MODEL": "openai-chat:local-llm", "OPENAI_BASE_URL": demo_server.base_url}
    done = run_module(DEMO, "demo", env=env, timeout=HANG)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"model: openai-chat:local-llm at {demo_server.base_url} (from AKGENTIC_MODEL)" in (
        done.stdout
    )
    assert "scripted model" not in done.stdout
    assert demo_server.served == 4  # delegate, research, report; after resume: recall
    assert {body["model"] for body in demo_server.requests} == {"local-llm"}
    assert "From our earlier conversation." in done.stdout


def test_a_malformed_akgentic_model_is_refused_with_exit_code_2(run_module: Run) -> None:
    done = run_module(DEMO, "demo", env={"AKGENTIC_MODEL": "gpt-4.1"})
    assert done.returncode == 2
    assert "AKGENTIC_MODEL must be provider:model" in done.stderr


def test_the_demo_can_keep_its_store_at_a_given_url(run_module: Run) -> None:
    done = run_module(DEMO, "demo", "--store", "sqlite:///kept/demo.db", timeout=HANG)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = run_module(
        "akgentic.cli.team_cmd", "team", "list", "--store", "sqlite:///kept/demo.db", "--json"
    )
    assert '"name": "demo-team"' in listed.stdout and '"status": "stopped"' in listed.stdout
