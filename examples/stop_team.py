"""Stop a team, from any process.

Run: ``python examples/stop_team.py TEAM_ID [STORE_URL]``. In the process that
runs the team, ``stop_team`` stops its actors and flushes its log. Here, in
another process, the team's actors are out of reach: a team another live
``akgentic`` process runs is asked to stop (SIGTERM) and waited for; one whose
process crashed or was killed is claimed and recorded as stopped; one run by an
application that cannot be asked raises ``TeamOwnedError``.
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
        TeamManager(actor_system, event_store).stop_team(team_id)
        process = event_store.load_team(team_id)
        print(process.status if process is not None else "unknown team")
    finally:
        actor_system.shutdown()
        event_store.close()


if __name__ == "__main__":
    main(UUID(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
