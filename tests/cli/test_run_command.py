"""``akgentic run CARD.yaml``, run as a real subprocess against a scripted model server."""

from __future__ import annotations

import contextlib
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.team import SqliteEventStore, TeamStatus
from akgentic.testing.waiting import wait_until

Run = Callable[..., subprocess.CompletedProcess[str]]
RUN = "akgentic.cli.run_cmd"
STOPPED = re.compile(r"team ([0-9a-f-]{36}) stopped and saved; resume it with: akgentic team")


def stored_status(tmp_path: Path, team_id: str) -> TeamStatus | None:
    with SqliteEventStore(tmp_path / "cli.db") as store:
        process = store.load_team(UUID(team_id))
        return None if process is None else process.status


def test_send_hires_delegates_answers_then_stops_and_saves_the_team(
    run_module: Run, demo_card_file: Path, demo_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    done = run_module(RUN, "run", str(demo_card_file), "--send", "Why are octopuses odd?")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "demo-team is running" in out
    assert "@Human → @Manager (request): Why are octopuses odd?" in out
    hire = re.search(r"\+ (@Researcher\d+) joined the team as Researcher, started by @Manager", out)
    assert hire is not None, out
    researcher = hire.group(1)
    assert f"@Manager → {researcher} (request): Please look into this" in out
    assert f"{researcher} → @Manager (response): 1) An octopus has three hearts" in out
    assert f"@Manager → @Human (response): Here is what {researcher} found." in out
    stopped = STOPPED.search(out)
    assert stopped is not None, out
    assert stored_status(tmp_path, stopped.group(1)) == TeamStatus.STOPPED
    assert demo_server.served == 3


def test_a_slash_line_is_run_by_the_lead_and_at_name_reaches_one_member(
    run_module: Run, demo_card_file: Path, demo_server: ScriptedLLMServer
) -> None:
    done = run_module(
        RUN,
        "run",
        str(demo_card_file),
        "--send",
        "/team_roles",
        "--send",
        "@Manager /hire_member Researcher name=@Ada",
        "--send",
        "@Nobody hello",
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "@Human → @Manager (request): /team_roles" in out
    assert "@Manager → @Human (notification): Roles you can hire" in out
    assert "- Researcher: Looks into a question" in out
    assert "+ @Ada joined the team as Researcher, started by @Manager" in out
    assert "not sent: team" in out and "no member named '@Nobody'" in out
    assert demo_server.requests == []  # commands never reach the model


def test_piped_lines_are_chatted_and_the_end_of_input_waits_for_the_answer(
    run_module: Run, demo_card_file: Path, tmp_path: Path
) -> None:
    done = run_module(
        RUN, "run", str(demo_card_file), "--interactive", stdin="/help\nWhat about squids?\n"
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "/quit" in out and "for the lead (@Manager)" in out
    assert "@Human → @Manager (request): What about squids?" in out
    assert "@Manager → @Human (response): Here is what @Researcher" in out
    stopped = STOPPED.search(out)
    assert stopped is not None and stored_status(tmp_path, stopped.group(1)) == TeamStatus.STOPPED


def test_quit_leaves_at_once_and_the_team_is_saved_stopped(
    run_module: Run, demo_card_file: Path, demo_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    done = run_module(RUN, "run", str(demo_card_file), "--interactive", stdin="/quit\nignored\n")
    assert done.returncode == 0, done.stderr
    assert "ignored" not in done.stdout
    stopped = STOPPED.search(done.stdout)
    assert stopped is not None and stored_status(tmp_path, stopped.group(1)) == TeamStatus.STOPPED
    assert demo_server.requests == []


def _chat(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """An interactive CLI child on pipes (use it in ``with``, which closes them)."""
    return subprocess.Popen(
        [sys.executable, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def _stacks(child: subprocess.Popen[str]) -> str:
    """``child``'s stderr with every thread's stack (its SIGUSR1 dump); then it is killed."""
    assert child.stderr is not None
    stderr = child.stderr
    text: list[str] = []
    reader = threading.Thread(target=lambda: text.extend(stderr), daemon=True)
    reader.start()
    child.send_signal(signal.SIGUSR1)
    with contextlib.suppress(AssertionError):
        wait_until(lambda: "most recent call first" in "".join(text), timeout=10)
    child.kill()
    child.wait(timeout=10)
    reader.join(timeout=10)
    return "".join(text)


#: Starts the command with SIGINT ignored, as a non-interactive shell starts a
#: background job (``cmd &`` in a CI script): exec keeps the ignored disposition.
IGNORING_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_stops_the_team_and_keeps_it_resumable(
    cli_env: dict[str, str], demo_card_file: Path, tmp_path: Path, inherited: str
) -> None:
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []
    command = ["-m", RUN, "run", str(demo_card_file), "--interactive"]
    if inherited == "ignored":
        command = ["-c", IGNORING_SIGINT, *command]
    # ``with`` closes the child's pipes once it is reaped (and its reader is done).
    with _chat(command, cli_env, tmp_path) as child:

        def pump() -> None:
            assert child.stdout is not None
            for line in child.stdout:
                lines.put(line)
            lines.put("")

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            while not any("/quit" in line for line in seen):  # the help line: chat is open
                line = lines.get(timeout=30)
                assert line, "".join(seen)
                seen.append(line)
            child.send_signal(signal.SIGINT)
            try:
                code = child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail("the team did not stop within 30 s after SIGINT:\n" + _stacks(child))
            assert code == 0
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
            reader.join(timeout=10)
    while not lines.empty():
        seen.append(lines.get())
    out = "".join(seen)
    assert "interrupted: stopping the team" in out
    stopped = STOPPED.search(out)
    assert stopped is not None, out
    assert stored_status(tmp_path, stopped.group(1)) == TeamStatus.STOPPED


def test_an_invalid_card_is_refused_with_exit_code_2_and_no_team_is_written(
    run_module: Run, tmp_path: Path
) -> None:
    card = tmp_path / "bad.yaml"
    card.write_text("name: bad\nentry_point:\n  card: {agent_class: no.such.Agent}\n")
    done = run_module(RUN, "run", str(card), "--send", "hi")
    assert done.returncode == 2
    assert "invalid team card" in done.stderr
    assert not (tmp_path / "cli.db").exists()


def test_a_model_without_credentials_is_refused_before_any_team_is_created(
    run_module: Run, tmp_path: Path
) -> None:
    from akgentic.cli.demo_cmd import DEMO_CARD

    # cli_env removes OPENAI_API_KEY and OPENAI_BASE_URL, so the card's OpenAI model cannot
    # be built: the run must say so in one error and write nothing.
    done = run_module(RUN, "run", str(DEMO_CARD), "--send", "hi", "--timeout", "10")
    assert done.returncode == 2
    assert "OPENAI_API_KEY is not set" in done.stderr
    assert "@Manager" in done.stderr and "profile Researcher" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "cli.db").exists()


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e308"])
def test_an_impossible_timeout_is_one_error_line_before_any_team_is_created(
    run_module: Run, demo_card_file: Path, tmp_path: Path, value: str
) -> None:
    done = run_module(RUN, "run", str(demo_card_file), "--send", "hi", "--timeout", value)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --timeout"), done.stderr
    assert not (tmp_path / "cli.db").exists()


@pytest.mark.parametrize("value", ["inf", "nan", "-1"])
@pytest.mark.parametrize("verb", ["create", "resume"])
def test_team_create_and_resume_refuse_an_impossible_timeout_in_one_line(
    run_module: Run, demo_card_file: Path, tmp_path: Path, value: str, verb: str
) -> None:
    target = str(demo_card_file) if verb == "create" else "00000000-0000-0000-0000-000000000000"
    done = run_module("akgentic.cli", "team", verb, target, "--timeout", value)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --timeout"), done.stderr
    assert not (tmp_path / "cli.db").exists()


def test_sigusr1_prints_every_threads_stack_and_the_team_goes_on(
    cli_env: dict[str, str], demo_card_file: Path, tmp_path: Path
) -> None:
    command = ["-m", RUN, "run", str(demo_card_file), "--interactive"]
    with _chat(command, cli_env, tmp_path) as child:
        assert child.stdout is not None and child.stderr is not None and child.stdin is not None
        try:
            for line in child.stdout:
                if "/quit" in line:
                    break
            stderr = child.stderr
            text: list[str] = []
            reader = threading.Thread(target=lambda: text.extend(stderr), daemon=True)
            reader.start()
            child.send_signal(signal.SIGUSR1)
            wait_until(lambda: "most recent call first" in "".join(text), timeout=30)
            assert child.poll() is None
            child.stdin.write("/quit\n")
            child.stdin.flush()
            assert child.wait(timeout=30) == 0
            reader.join(timeout=10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)
    assert "run_cmd.py" in "".join(text)  # the main thread, in the chat loop
