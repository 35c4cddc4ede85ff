"""The team layer's event subscribers under the module name the product documents use.

Same classes as :mod:`akgentic.team.subscribers`.
"""

from akgentic.team.subscribers.idle import IdleStopSubscriber
from akgentic.team.subscribers.persistence import PersistenceSubscriber

__all__ = ["IdleStopSubscriber", "PersistenceSubscriber"]
