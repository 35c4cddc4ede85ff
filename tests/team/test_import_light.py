"""Importing the team layer's main classes stays light.

How long it takes is a benchmark figure (``import_akgentic_team_s`` in
``bench/agent_turn.py``); what is tested is what made it regress once: asyncio (and
with it ssl and subprocess, ~15 ms) pulled in by the persistence subscriber, which
needs it only when a protocol server awaits a commit; and the whole of ``akgentic.llm``
pulled in by the team card's ``budget:`` block.
"""

from __future__ import annotations

import json
import subprocess
import sys


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_team_classes_load_no_event_loop_machinery() -> None:
    modules = _modules_after("from akgentic.team import TeamManager, TeamCard, TeamRuntime")
    assert "akgentic.team.subscribers.persistence" in modules  # the test reaches it
    assert not modules & {"asyncio", "ssl", "subprocess"}


def test_the_team_classes_load_the_budget_block_but_not_the_llm_models() -> None:
    # The second regression: the card's ``budget:`` block pulled in the whole of
    # ``akgentic.llm`` (its configuration and event models, ~60 ms) and the counter.
    modules = _modules_after("from akgentic.team import TeamManager, TeamCard, TeamRuntime")
    assert "akgentic.llm.budget_limits" in modules  # the card validates its block
    loaded = {m for m in modules if m.startswith("akgentic.llm.")}
    assert loaded == {"akgentic.llm.budget_limits"}, loaded


def test_a_name_of_akgentic_llm_still_resolves_on_first_use() -> None:
    modules = _modules_after(
        "import akgentic.llm\nassert akgentic.llm.LlmUsageEvent.__name__ == 'LlmUsageEvent'"
    )
    assert "akgentic.llm.events" in modules
    assert "pydantic_ai" not in modules
