"""Resume a stopped team, send it one message, stop it again.

Run: ``python examples/resume_team.py TEAM_ID TEXT [STORE_URL]``.
"""

from __future__ import annotations

import sys
from uuid import UUID

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, open_event_store


def main(team_id: UUID, text: str, store_url: str | None) -> None:
    actor_system = ActorSystem()
    event_store = open_event_store(store_url)
    try:
        manager = TeamManager(actor_system, event_store)
        runtime = manager.resume_team(team_id)  # history, states and roster come back
        runtime.send(text)
        runtime.wait_idle(timeout=10)
        manager.stop_team(team_id)  # new events continued the stored sequence
    finally:
        actor_system.shutdown()
        event_store.close()


if __name__ == "__main__":
    main(UUID(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
