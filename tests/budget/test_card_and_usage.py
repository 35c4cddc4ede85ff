"""The ``budget:`` block of a card (validated at load, round-trips) and ``akgentic team usage``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.team import TeamCard
from akgentic.team.card_yaml import TeamCardValidationError

CARD = """\
name: t
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The person
    config: {{name: "@Human", role: Human}}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: Lead
      config: {{name: "@Lead", role: Lead, model_cfg: {{provider: openai, model: gpt-4.1-mini}}}}
budget:
{budget}
"""


def card_text(budget: str) -> str:
    return CARD.format(budget="".join(f"  {line}\n" for line in budget.splitlines()))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
    return subprocess.run(
        [sys.executable, "-m", "akgentic.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("budget", "line", "problem"),
    [
        ("usd: 0", 13, "budget.usd: Input should be greater than 0"),
        ("requests: 10\nwarn_at: 1.5", 14, "budget.warn_at: Input should be less than 1"),
        ("requests: ten", 13, "budget.requests: Input should be a valid integer"),
        ("requests: 10\ndollars: 5", 14, "budget.dollars: Extra inputs are not permitted"),
        ("warn_at: 0.5", 13, "budget: set at least one limit"),
    ],
)
def test_a_malformed_budget_block_is_refused_with_its_location(
    budget: str, line: int, problem: str
) -> None:
    with pytest.raises(TeamCardValidationError) as caught:
        TeamCard.from_yaml(card_text(budget), "team.yaml")
    assert f"line {line}: {problem}" in str(caught.value)


def test_the_cli_refuses_a_malformed_budget_and_creates_nothing(tmp_path: Path) -> None:
    card = tmp_path / "bad-team.yaml"
    card.write_text(card_text("usd: -1\nrequests: 1.5"), encoding="utf-8")
    store = tmp_path / "akgentic.db"
    result = cli("team", "create", str(card), "--store", f"sqlite:///{store}", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "budget.usd: Input should be greater than 0" in result.stderr
    assert "budget.requests: Input should be a valid integer" in result.stderr
    assert not store.exists()


def test_a_budget_block_round_trips_through_yaml() -> None:
    card = TeamCard.from_yaml(card_text("usd: 2.5\nrequests: 40\nwarn_at: 0.9\nhire_floor: 0.2"))
    assert card.budget is not None
    assert (card.budget.usd, card.budget.requests, card.budget.warn_at) == (2.5, 40, 0.9)
    again = TeamCard.from_yaml(card.to_yaml())
    assert again == card
    assert "budget:" in card.to_yaml()
    assert TeamCard.model_validate(card.model_dump()) == card


def test_team_usage_prints_per_member_model_and_run_with_the_budget(
    make_team: Callable[..., Any], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    team = make_team("requests: 20\nusd: 1.0")
    team.say("delegate")
    team.wait(lambda: [c for s, t, c in team.said("@Human") if "all done" in c])
    assert team.runtime.wait_idle(60)
    team_id = str(team.runtime.id)
    team.manager.stop_team(team.runtime.id)

    result = cli("team", "usage", team_id, "--store", team.store_url, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    members = {row["member"]: row for row in report["members"]}
    assert members["@Lead"]["requests"] == 2
    assert members["@Worker"]["requests"] == 1
    assert members["@Lead"]["input_tokens"] == 200
    assert report["totals"]["requests"] == 3 == llm.served
    assert {row["model"] for row in report["models"]} == {
        "openai:lead-model",
        "openai:worker-model",
    }
    assert {row["member"] for row in report["runs"]} == {"@Lead", "@Worker"}
    assert len(report["runs"]) == 3
    budget = report["budget"]
    assert budget["limits"]["requests"] == 20
    assert budget["spent"]["requests"] == 3
    assert budget["blocked"] is None

    text = cli("team", "usage", team_id, "--store", team.store_url, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    for needle in ("per member", "per model", "per run", "team budget", "@Worker"):
        assert needle in text.stdout

    unknown = cli(
        "team",
        "usage",
        "00000000-0000-0000-0000-000000000000",
        "--store",
        team.store_url,
        cwd=tmp_path,
    )
    assert unknown.returncode == 1
