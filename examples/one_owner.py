"""One owner per team: a second manager cannot resume a team the first one runs.

Run: ``python examples/one_owner.py [STORE_URL]``. The two managers stand for two
processes (each has its own store handle); the second is refused with
``TeamOwnedError`` naming the owner, and takes the team once the first stopped it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, TeamOwnedError, load_team_card, open_event_store

CARD = Path(__file__).with_name("echo-team.yaml")


def main(store_url: str | None) -> None:
    actor_system = ActorSystem()
    first_store, second_store = open_event_store(store_url), open_event_store(store_url)
    try:
        first = TeamManager(actor_system, first_store)
        second = TeamManager(actor_system, second_store)
        runtime = first.create_team(load_team_card(CARD))
        try:
            second.resume_team(runtime.id)
        except TeamOwnedError as exc:
            print("refused:", "is running in process" in str(exc))
        first.stop_team(runtime.id)  # gives the claim up
        second.resume_team(runtime.id)  # now the second manager owns it
        second.stop_team(str(runtime.id))  # team ids may be strings too
        process = second.get_team(runtime.id)
        print("epoch:", process.epoch if process is not None else None)
    finally:
        actor_system.shutdown()
        first_store.close()
        second_store.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
