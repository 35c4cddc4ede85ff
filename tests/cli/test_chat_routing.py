"""``team resume`` chats like ``akgentic run``; ``/hire_member`` answers with a name.

Real subprocesses against the scripted demo model.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from akgentic.llm.scripted_server import ScriptedLLMServer

Run = Callable[..., subprocess.CompletedProcess[str]]
RUN = "akgentic.cli.run_cmd"
TEAM = "akgentic.cli.team_cmd"


def _stopped_team(run_module: Run, card: Path) -> str:
    created = run_module(TEAM, "team", "create", str(card), "--no-interactive", "--timeout", "30")
    assert created.returncode == 0, created.stderr
    return created.stdout.strip().splitlines()[-1]


def test_hire_member_answers_with_the_member_name_and_role(
    run_module: Run, demo_card_file: Path
) -> None:
    done = run_module(RUN, "run", str(demo_card_file), "--send", "/hire_member Researcher")
    assert done.returncode == 0, done.stderr
    assert "<ActorAddress" not in done.stdout
    answer = re.search(
        r"@Manager → @Human \(notification\): (@Researcher\d*) \(Researcher\)", done.stdout
    )
    assert answer is not None, done.stdout


def test_resume_send_routes_an_at_name_prefix_to_that_member(
    run_module: Run, demo_card_file: Path, demo_server: ScriptedLLMServer
) -> None:
    team_id = _stopped_team(run_module, demo_card_file)
    resumed = run_module(
        TEAM,
        "team",
        "resume",
        team_id,
        "--send",
        "@Manager Why are octopuses odd?",
        "--send",
        "@Nobody hello",
        "--no-interactive",
    )
    assert resumed.returncode == 0, resumed.stderr
    # Delivered to @Manager without the prefix, in run's format (intent shown).
    assert "@Human → @Manager (request): Why are octopuses odd?" in resumed.stderr
    assert "@Manager Why are octopuses odd?" not in resumed.stderr
    assert "not sent:" in resumed.stderr and "@Nobody" in resumed.stderr
    assert any("Why are octopuses odd?" in str(body) for body in demo_server.requests)


def test_resume_chat_shows_runs_help_banner_and_quit_leaves(
    run_module: Run, demo_card_file: Path
) -> None:
    team_id = _stopped_team(run_module, demo_card_file)
    resumed = run_module(
        TEAM, "team", "resume", team_id, "--interactive", stdin="/help\n/quit\nnever sent\n"
    )
    assert resumed.returncode == 0, resumed.stderr
    banner = "Type a message for the team, @Name text for one member, /command for the lead"
    assert resumed.stdout.count(banner) == 2, resumed.stdout
    assert "never sent" not in resumed.stdout + resumed.stderr
