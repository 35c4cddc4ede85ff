"""Delete a stopped team: its record, its event log and its agents' states.

Run: ``python examples/delete_team.py TEAM_ID [STORE_URL]``. A running team
must be stopped first; deleting it raises ``TeamStateError``.
"""

from __future__ import annotations

import sys
from uuid import UUID

from akgentic.core import ActorSystem
from akgentic.team import TeamManager, open_event_store


def main(team_id: UUID, store_url: str | None) -> None:
    actor_system = ActorSystem()
    event_store = open_event_store(store_url)
    try:
        TeamManager(actor_system, event_store).delete_team(team_id)
        print("deleted" if event_store.load_team(team_id) is None else "still there")
    finally:
        actor_system.shutdown()
        event_store.close()


if __name__ == "__main__":
    main(UUID(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
