"""Event subscribers of the team layer: persistence, idle-stop and activity tracking."""

from akgentic.team.subscribers.activity import ActivityMonitor
from akgentic.team.subscribers.idle import IdleStopSubscriber
from akgentic.team.subscribers.persistence import PersistenceStoppedError, PersistenceSubscriber

__all__ = [
    "ActivityMonitor",
    "IdleStopSubscriber",
    "PersistenceStoppedError",
    "PersistenceSubscriber",
]
