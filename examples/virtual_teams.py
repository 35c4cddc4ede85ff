"""Virtual teams: an idle team is passivated, and the next message brings it back.

Run: ``python examples/virtual_teams.py [STORE_URL]`` (default: ``$AKGENTIC_STORE``,
else ``sqlite:///.akgentic/akgentic.db``). Prints::

    Echo: Hello!
    passivated
    Echo: Still there?
    running
    Echo: By id
"""

from __future__ import annotations

import sys
import time
from uuid import UUID

from echo_team import echo_team_card

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, TeamStatus, open_event_store


def status_of(manager: TeamManager, team_id: UUID) -> str:
    record = manager.get_team(team_id)
    return "gone" if record is None else str(record.status)


def wait_for_status(manager: TeamManager, team_id: UUID, status: TeamStatus) -> None:
    deadline = time.monotonic() + 30
    while status_of(manager, team_id) != status:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the team never became {status}")
        time.sleep(0.05)


def main(store_url: str | None) -> None:
    actor_system = ActorSystem()
    event_store = open_event_store(store_url)
    # Passivate after half a second idle (the default is 300 s; a card may say its own).
    manager = TeamManager(actor_system, event_store, passivate_after=0.5)
    try:
        runtime = manager.create_team(echo_team_card())
        runtime.send("Hello!")  # -> Echo: Hello!
        runtime.wait_idle(timeout=10)

        wait_for_status(manager, runtime.id, TeamStatus.PASSIVATED)
        print(status_of(manager, runtime.id))  # passivated

        runtime.send("Still there?")  # the same handle: the team is activated first
        runtime.wait_idle(timeout=10)
        print(status_of(manager, runtime.id))  # running

        woken = manager.send(runtime.id, "By id")  # by id: what the console, A2A, MCP use
        woken.wait_idle(timeout=10)

        manager.stop_team(runtime.id)  # a stopped team wants an explicit resume again
        manager.delete_team(runtime.id)
    finally:
        actor_system.shutdown()
        event_store.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
