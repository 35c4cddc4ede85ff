"""``--scripted SCRIPT.yaml`` on ``run`` and ``team create``, what ``team inspect --events``
shows of the model's work, and ``team list`` ids in a pipe. Real subprocesses."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from akgentic.cli.team_script import (
    MemberStep,
    TeamScript,
    TeamScriptError,
    load_team_script,
    scripted_team,
)
from akgentic.team import TeamCard
from akgentic.team.card_yaml import dump_yaml
from akgentic.testing.cards import human_worker_team_yaml

Run = Callable[..., subprocess.CompletedProcess[str]]
TEAM = "akgentic.cli.team_cmd"
RUN = "akgentic.cli.run_cmd"

CARD = human_worker_team_yaml(
    "scripted-team",
    human_description="the person",
    worker_description="looks around",
    model_cfg={"provider": "openai", "model": "gpt-4.1-mini"},
)

SCRIPT = """\
members:
  "@Worker":
    - tool: team_activity
    - send:
        - to: "@Human"
          message: All quiet in the team.
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    card, script = tmp_path / "team.yaml", tmp_path / "script.yaml"
    card.write_text(CARD)
    script.write_text(SCRIPT)
    return card, script


def test_run_with_a_script_calls_the_tool_and_answers_without_an_api_key(
    run_module: Run, files: tuple[Path, Path]
) -> None:
    card, script = files
    done = run_module(RUN, "run", str(card), "--scripted", str(script), "--send", "News?")
    assert done.returncode == 0, done.stderr
    assert "@Human → @Worker (request): News?" in done.stdout
    assert "@Worker → @Human (response): All quiet in the team." in done.stdout


def test_team_create_with_a_script_and_inspect_shows_tool_calls_returns_and_model_messages(
    run_module: Run, files: tuple[Path, Path]
) -> None:
    card, script = files
    created = run_module(
        TEAM, "team", "create", str(card), "--scripted", str(script), "--send", "News?"
    )
    assert created.returncode == 0, created.stderr
    team_id = created.stdout.strip().splitlines()[-1]
    inspected = run_module(TEAM, "team", "inspect", team_id, "--events", "--json")
    assert inspected.returncode == 0, inspected.stderr
    rows = json.loads(inspected.stdout)["events"]
    by_kind: dict[str | None, list[str]] = {}
    for row in rows:
        by_kind.setdefault(row["event"], []).append(row["summary"])
    assert by_kind["ToolCallEvent"] == ["tool call team_activity({})"]
    assert by_kind["ToolReturnEvent"] == ["tool return team_activity: ok"]
    model = by_kind["LlmMessageEvent"]
    assert model[0].startswith("to model: prompt: ") and "News?" in model[0]
    assert "model: calls team_activity({})" in model
    assert any(s.startswith("to model: team_activity returned: ") for s in model)
    assert any(s.startswith('model: says: {"messages"') for s in model)
    table = run_module(TEAM, "team", "inspect", team_id, "--events", env={"COLUMNS": "200"})
    assert "EventMessage: ToolCallEvent" in table.stdout
    assert "tool call team_activity({})" in table.stdout


def test_a_script_naming_no_member_of_the_card_exits_2_before_anything_starts(
    run_module: Run, files: tuple[Path, Path], tmp_path: Path
) -> None:
    card, script = files
    script.write_text(SCRIPT.replace('"@Worker"', '"@Nobody"'))
    done = run_module(TEAM, "team", "create", str(card), "--scripted", str(script))
    assert done.returncode == 2, done.stderr
    assert "the team script names @Nobody" in done.stderr and "@Worker" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "cli.db").exists()


def test_an_invalid_step_is_an_error_naming_its_place(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text('members:\n  "@Worker":\n    - {tool: x, text: y}\n    - {say: hi}\n')
    with pytest.raises(TeamScriptError) as caught:
        load_team_script(script)
    message = str(caught.value)
    assert "members.@Worker.0: Value error, a step is exactly one of" in message
    assert "members.@Worker.1.say: Extra inputs are not permitted" in message


def test_a_member_past_the_end_of_its_steps_is_told_so_and_others_keep_theirs() -> None:
    data = yaml.safe_load(CARD)
    data["members"].append(
        {
            "card": {
                "agent_class": "akgentic.agent.BaseAgent",
                "description": "x",
                "config": {"name": "@Other", "role": "Other"},
            }
        }
    )
    card = TeamCard.from_yaml(dump_yaml(data))
    script = TeamScript(members={"Worker": [MemberStep(text="one")], "@Other": []})
    with scripted_team(card, script) as server:
        worker = card.members[0].card.config.model_cfg  # type: ignore[attr-defined]
        other = card.members[1].card.config.model_cfg  # type: ignore[attr-defined]
        assert (worker.model, other.model) == ("scripted:Worker", "scripted:@Other")
        assert worker.base_url == other.base_url == server.base_url
        first, first_body = _chat(server.base_url, "scripted:Worker")
        assert first == 200 and first_body["choices"][0]["message"]["content"] == "one"
        spent, spent_body = _chat(server.base_url, "scripted:Worker")
        assert spent == 400
        assert "Worker has no step left (1 played)" in spent_body["error"]["message"]
        empty, empty_body = _chat(server.base_url, "scripted:@Other")
        assert (
            empty == 400
            and "@Other has no step left (0 played)" in (empty_body["error"]["message"])
        )


def _chat(base_url: str, model: str) -> tuple[int, dict[str, Any]]:
    """POST one chat completion to the scripted server (what the OpenAI client sends)."""
    import urllib.error
    import urllib.request

    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]})
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_team_list_prints_whole_ids_into_a_pipe(run_module: Run, files: tuple[Path, Path]) -> None:
    card, script = files
    ids = []
    for _ in range(2):
        created = run_module(TEAM, "team", "create", str(card), "--scripted", str(script))
        assert created.returncode == 0, created.stderr
        ids.append(created.stdout.strip().splitlines()[-1])
    listed = run_module(TEAM, "team", "list", env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    shown = set(
        re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", listed.stdout)
    )
    assert shown == set(ids)
    assert "…" not in listed.stdout


def test_the_script_shown_in_the_agent_guide_is_the_one_these_tests_run() -> None:
    import yaml

    guide = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
    section = guide.read_text(encoding="utf-8").split("### A scripted model for a whole team")[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = TeamScript.model_validate(yaml.safe_load(block))
    assert shown == TeamScript.model_validate(yaml.safe_load(SCRIPT))
