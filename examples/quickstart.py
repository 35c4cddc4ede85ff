"""Quick Start: create a team, talk to it, stop it, resume it, talk again, delete it.

Run: ``python examples/quickstart.py [STORE_URL]`` (default: ``$AKGENTIC_STORE``,
else ``sqlite:///.akgentic/akgentic.db``). Prints ``Echo: Hello!`` before the
resume and ``Echo: Back!`` after it.
"""

from __future__ import annotations

import sys

from echo_team import echo_team_card

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, open_event_store


def main(store_url: str | None) -> None:
    actor_system = ActorSystem()
    event_store = open_event_store(store_url)
    manager = TeamManager(actor_system=actor_system, event_store=event_store)
    try:
        runtime = manager.create_team(echo_team_card())
        runtime.send("Hello!")  # -> Echo: Hello!
        runtime.wait_idle(timeout=10)  # sends are asynchronous: wait for the echo

        manager.stop_team(runtime.id)
        resumed = manager.resume_team(runtime.id)  # rebuilt from the event log
        resumed.send("Back!")  # -> Echo: Back!
        resumed.wait_idle(timeout=10)

        manager.stop_team(resumed.id)
        manager.delete_team(resumed.id)
    finally:
        actor_system.shutdown()  # the actor threads would otherwise keep the process alive
        event_store.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
