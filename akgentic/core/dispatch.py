"""The ``receiveMsg_<ClassName>`` dispatch convention, resolved once per class pair.

For a message of class ``M`` received by an actor of class ``A`` the handler
chain is: for each class ``X`` in ``M``'s MRO, for each class ``K`` in ``A``'s MRO
that has ``receiveMsg_X``, the function as resolved from ``K``. Each distinct
function appears once. Handlers run in that order until one returns something
other than :data:`SUPER`; ``None`` counts as handled. A handler declaring a
parameter named ``sender`` receives the message's sender.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

__all__ = ["SUPER", "Handler", "resolve_handlers"]


class _SuperSentinel:
    __slots__ = ()

    def __repr__(self) -> str:
        return "SUPER"


SUPER: Final[Any] = _SuperSentinel()
"""Return this from a handler to let the next handler in the chain run."""

Handler = tuple[Callable[..., Any], bool]

_chains: dict[tuple[type, type], tuple[Handler, ...]] = {}


def _wants_sender(fn: Callable[..., Any]) -> bool:
    try:
        return "sender" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def resolve_handlers(actor_cls: type, message_cls: type) -> tuple[Handler, ...]:
    """Handler chain for ``message_cls`` on ``actor_cls`` (cached)."""
    key = (actor_cls, message_cls)
    chain = _chains.get(key)
    if chain is not None:
        return chain
    found: list[Handler] = []
    seen: set[int] = set()
    for mcls in message_cls.__mro__:
        name = "receiveMsg_" + mcls.__name__
        if not hasattr(actor_cls, name):
            continue
        for acls in actor_cls.__mro__:
            fn = getattr(acls, name, None)
            # A class that inherits the method without overriding it resolves to
            # the same function; running it twice would be a bug, not a feature.
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            found.append((fn, _wants_sender(fn)))
    chain = _chains[key] = tuple(found)
    return chain
