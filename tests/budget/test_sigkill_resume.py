"""A team budget survives a SIGKILL: the resumed team has the same budget and question."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

from akgentic.llm.budget_events import BudgetExhausted, BudgetWarned
from akgentic.llm.scripted_server import ScriptedLLMServer

# The child runs the team until the budget ran out and the human was asked (durably),
# says so, and waits to be killed: the model server lives in the test.
CHILD = """
import sys
from akgentic.agent.messages import AgentMessage
from akgentic.console.views import pending_questions
from akgentic.plugin_api import ActorSystem, TeamCard, TeamManager, open_event_store
from akgentic.testing.waiting import poll_until

store = open_event_store(sys.argv[1])
manager = TeamManager(ActorSystem(), store)
runtime = manager.create_team(TeamCard.from_yaml(open(sys.argv[2], encoding="utf-8").read()))
for _ in range(5):
    runtime.send_to("@Lead", AgentMessage(content="ping", type="request"))
    assert runtime.wait_idle(60)
runtime.send_to("@Lead", AgentMessage(content="ping", type="request"))
persistence = manager.get_persistence(runtime.id)


def asked():
    persistence.flush(30)
    log = [e.event for e in store.load_events(runtime.id)]
    return pending_questions(list(enumerate(log)))


assert poll_until(asked, timeout=120)
print("asked", runtime.id, asked()[0]["id"], flush=True)
sys.stdin.readline()
"""


def _asked_then_killed(store: str, card: Path) -> tuple[UUID, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AKGENTIC_", "OTEL_"))}
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, store, str(card)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as child:
        try:
            assert child.stdout is not None
            # Bounded: a child that fails keeps its actor threads, and its pipe open.
            ready, _w, _x = select.select([child.stdout], [], [], 180)
            line = child.stdout.readline() if ready else ""
            assert line.startswith("asked "), f"the child did not ask: {line!r}"
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait(timeout=60) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=60)
    _asked, team_id, question = line.split()
    return UUID(team_id), question


def test_the_budget_survives_a_sigkill_and_a_resume(
    budget_card: Callable[..., str],
    make_team: Callable[..., Any],
    tmp_path: Path,
    llm: ScriptedLLMServer,
) -> None:
    store = f"sqlite:///{tmp_path}/akgentic.db"
    card = tmp_path / "team.yaml"
    card.write_text(budget_card("requests: 5"), encoding="utf-8")
    team_id, question = _asked_then_killed(store, card)
    assert llm.served == 5

    team = make_team(store_url=store, team_id=team_id)
    budget = team.budget()
    # Rebuilt from the log: what was spent, the warning given, the question open.
    assert budget.spent().requests == 5
    assert budget.warned
    assert budget.question == question
    assert budget.blocked == "requests"
    assert [q["id"] for q in team.questions()] == [question]

    team.answer(question, "/budget raise requests=10")
    team.wait(lambda: budget.blocked is None)
    team.say("ping")
    team.wait(lambda: [c for s, t, c in team.said("@Human") if c == "pong"])
    assert team.runtime.wait_idle(60)
    log = team.stored()

    def count(cls: type) -> int:
        return sum(1 for m in log if isinstance(getattr(m, "event", None), cls))

    assert count(BudgetWarned) == 1, "the resumed team warned again"
    assert count(BudgetExhausted) == 1, "the resumed team asked again"
    assert budget.spent().requests == llm.served
