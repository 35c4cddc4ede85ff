"""EventSubscriber: how code outside the actors watches a team."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol
from uuid import UUID

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = ["EventSubscriber"]


class EventSubscriber(Protocol):
    """Observer attached to an orchestrator; implement only the hooks you need.

    Hooks run on the orchestrator's thread (except ``set_restoring``, called by
    the team layer): keep them short and never block. An exception raised by
    one subscriber is logged and does not affect the others. Messages given to
    ``on_message`` carry snapshot addresses, never live ones.
    """

    def on_message(self, msg: Message) -> None:
        """A message was recorded, replayed or emitted by the team."""
        return None

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """The team layer starts (True) or ends (False) replaying history."""
        return None

    def on_stop_request(self, team_id: UUID) -> None:
        """Teardown of the team has begun."""
        return None

    def on_stop(self, team_id: UUID) -> None:
        """The orchestrator is stopping; last call before subscribers are dropped."""
        return None
