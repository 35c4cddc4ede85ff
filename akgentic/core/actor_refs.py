"""What the layers above the actor runtime may do with a raw actor reference.

pykka is the runtime's implementation, and :mod:`akgentic.core._pykka_seam` is where
its internals are touched; nothing outside ``akgentic/core`` imports either (the
layering test enforces it). Team management, restoring and the test kit still need
a few operations on references, and they find them here, under names that say what
they do rather than how pykka does it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pykka
from pykka.messages import ProxyCall

from akgentic.core._pykka_seam import actor_of, call_teller, thread_of

if TYPE_CHECKING:
    from akgentic.core.actor_address import ActorAddress

__all__ = [
    "ActorDeadError",
    "ActorRef",
    "ActorTimeout",
    "actor_of",
    "ask_call",
    "call_teller",
    "team_actors",
    "thread_of",
]

#: A reference to a running actor (what an ``ActorAddress`` wraps).
ActorRef = pykka.ActorRef
#: Raised by an ask to an actor that stopped.
ActorDeadError = pykka.ActorDeadError
#: Raised by an ask that got no answer within its timeout.
ActorTimeout = pykka.Timeout


def ask_call(target: ActorRef[Any] | ActorAddress, *attr_path: str) -> Any:
    """Ask the actor to call its attribute at ``attr_path`` with no arguments; the result.

    ``ask_call(address, "messages", "clear")`` runs ``actor.messages.clear()`` on the
    actor's own thread, between its other messages. ``target`` is a reference or a
    live address.
    """
    return target.ask(ProxyCall(attr_path=attr_path, args=(), kwargs={}))


def team_actors(team_id: object) -> list[ActorRef[Any]]:
    """The references of every live actor whose ``team_id`` is ``team_id``."""
    return [
        ref
        for ref in pykka.ActorRegistry.get_all()
        if getattr(actor_of(ref), "team_id", None) == team_id
    ]
