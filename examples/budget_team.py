"""A team under a team-wide budget, offline: the walk-through of docs/budgets.md.

Runs ``budget-team.yaml`` (a manager and a researcher sharing a budget of three model
requests) on the scripted model of ``budget-script.yaml``, in a store under a temporary
directory (or the one named as the first argument):

1. the human asks the manager, who asks the researcher; at the second request the team
   crosses 50% of its budget and the manager and the human are warned;
2. the manager's third request uses the budget up: its next one waits, and the human
   is asked, as an open question, to raise the budget or stop;
3. the human answers ``/budget raise requests=6``: the manager goes on where it was and
   answers;
4. the usage per member, per model and per run is printed, as ``akgentic team usage``
   prints it.

    python examples/budget_team.py [STORE_URL]
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from akgentic.agent.session import route_line
from akgentic.cli.team_script import load_team_script, scripted_team
from akgentic.cli.usage_cmd import team_usage
from akgentic.console.views import pending_questions
from akgentic.core import ActorSystem, EventSubscriber
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.team import TeamCard, TeamManager
from akgentic.team.urls import open_event_store

HERE = Path(__file__).resolve().parent
TIMEOUT = 60.0


class Watcher(EventSubscriber):
    """Prints what is said to the human; notes when the budget question is asked."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.answered = threading.Event()

    def on_message(self, msg: Message) -> None:
        if not isinstance(msg, SentMessage) or not msg.recipient.is_user_proxy:
            return
        content = str(getattr(msg.message, "content", ""))
        print(f"{msg.sender.name if msg.sender else '?'} -> human: {content}")
        if "budget is used up" in content:
            self.asked.set()
        if content.startswith("Here are the facts"):
            self.answered.set()


def main(store_url: str) -> None:
    card = TeamCard.from_file(HERE / "budget-team.yaml")
    script = load_team_script(HERE / "budget-script.yaml")
    watcher = Watcher()
    system = ActorSystem()
    store = open_event_store(store_url)
    try:
        with scripted_team(card, script):
            manager = TeamManager(system, store, subscribers=[watcher])
            runtime = manager.create_team(card)
            runtime.send_to("@Manager", "find facts about octopuses")
            if not watcher.asked.wait(TIMEOUT):
                raise SystemExit("the budget question was never asked")
            persistence = manager.get_persistence(runtime.id)
            if persistence is not None:  # managed teams have one: flush what is queued
                persistence.flush(TIMEOUT)
            log = [e.event for e in store.load_events(runtime.id)]
            questions = pending_questions(list(enumerate(log)))
            print(f"open questions: {len(questions)}")
            print("human: /budget raise requests=6")
            route_line(runtime, "/budget raise requests=6")
            if not watcher.answered.wait(TIMEOUT) or not runtime.wait_idle(TIMEOUT):
                raise SystemExit("the team did not go on after the raise")
            manager.stop_team(runtime.id)
            report = team_usage([e.event for e in store.load_events(runtime.id)], card)
    finally:
        system.shutdown(timeout=10)
        store.close()
    for row in report["members"]:
        print(f"{row['member']}: {row['requests']} requests")
    budget = report["budget"]
    print(f"budget: {budget['spent']['requests']} of {budget['limits']['requests']} requests")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as directory:
            main(f"sqlite:///{directory}/akgentic.db")
