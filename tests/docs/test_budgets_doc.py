"""docs/budgets.md: its walk-through runs as shown, and its budget block is valid."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from akgentic.llm.team_budget import BudgetLimits
from akgentic.team import TeamCard

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "budgets.md"


def test_the_walk_through_runs_as_the_page_shows(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AKGENTIC_", "OTEL_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "budget_team.py"), f"sqlite:///{tmp_path}/a.db"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    page = PAGE.read_text(encoding="utf-8")
    shown = page.split("$ python examples/budget_team.py\n", 1)[1].split("```", 1)[0]
    # Every line the page shows is printed, in that order (the page cuts one with "...").
    expected = [line.split(" ...")[0] for line in shown.strip().splitlines()]
    found = 0
    for line in lines:
        if found < len(expected) and line.startswith(expected[found]):
            found += 1
    assert found == len(expected), f"missing {expected[found]!r} in:\n{result.stdout}"


def test_the_budget_block_of_the_page_and_the_example_card_are_valid() -> None:
    page = PAGE.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(budget:.*?)```", page, re.S)
    assert block is not None
    limits = BudgetLimits.model_validate(yaml.safe_load(block.group(1))["budget"])
    assert limits.usd == 5.0 and limits.hire_floor_usd == 1.0
    card = TeamCard.from_file(ROOT / "examples" / "budget-team.yaml")
    assert card.budget is not None and card.budget.requests == 3
