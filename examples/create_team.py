"""Create a team from the YAML card, say hello, stop it and print its id.

Run: ``python examples/create_team.py [STORE_URL]``. A process that exits must
stop its teams first (``stop_team`` flushes the log and records the team as
stopped); the printed id is what ``resume_team.py`` and ``delete_team.py`` take.
"""

from __future__ import annotations

import sys
from pathlib import Path

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, load_team_card, open_event_store

CARD = Path(__file__).with_name("echo-team.yaml")


def main(store_url: str | None) -> None:
    actor_system = ActorSystem()
    event_store = open_event_store(store_url)
    try:
        manager = TeamManager(actor_system, event_store)
        runtime = manager.create_team(load_team_card(CARD))
        runtime.send("Hello from create_team.py")
        runtime.wait_idle(timeout=10)
        manager.stop_team(runtime.id)
        print(runtime.id)
    finally:
        actor_system.shutdown()
        event_store.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
