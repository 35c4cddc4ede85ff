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

    Optional batch hook: a subscriber may also define ``on_messages(msgs)``
    (``msgs`` a sequence of messages, in order). The orchestrator then hands it
    the turn telemetry of one envelope at once, instead of calling
    ``on_message`` for each; it must have the same effect as those calls (one
    lock taken for all of them, say). It is used only when the subscriber's
    class defines it at least as far down its hierarchy as ``on_message``, so a
    subclass overriding ``on_message`` alone keeps getting messages one by one.
    An exception it raises is logged once; the rest of that batch is not
    offered again. Each subscriber sees the team's messages in the order they
    were recorded, but within one envelope a subscriber may get the whole
    batch before the next subscriber gets its first message.
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
