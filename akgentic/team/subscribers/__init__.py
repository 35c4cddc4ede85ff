"""Event subscribers the team layer attaches to every team it runs."""

from __future__ import annotations

from akgentic.team.subscribers.persistence import PersistenceSubscriber

__all__ = ["PersistenceSubscriber"]
