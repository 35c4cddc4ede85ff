"""The live address: a pykka reference plus a metadata snapshot taken once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from uuid import UUID

import pykka
from pykka.messages import ProxyCall

from akgentic.core._pykka_seam import actor_of, live_poster
from akgentic.core.actor_address import (
    _NIL,
    ActorAddress,
    ActorAddressDict,
    ActorAddressProxy,
)

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = ["ActorAddressImpl", "address_of"]


class ActorAddressImpl(ActorAddress):
    """Address of a running actor.

    Metadata (id, name, role, team, squad, class) is read once, at construction,
    so the address keeps describing its actor after the actor is stopped and
    garbage-collected. Delivery goes straight to the pykka inbox.
    """

    __slots__ = (  # noqa: RUF023 - grouped by role, not alphabetical
        "_actor_ref",
        "_agent_id",
        "_name",
        "_role",
        "_team_id",
        "_squad_id",
        "_is_user_proxy",
        "_actor_type",
        "_proxy",
        "_post",
    )

    def __init__(self, actor_ref: pykka.ActorRef[Any]) -> None:
        self._actor_ref = actor_ref
        self._proxy: ActorAddressProxy | None = None
        # ActorRef.tell minus its second liveness check, straight into the inbox.
        self._post: Callable[[Any], bool] = live_poster(actor_ref)
        actor = actor_of(actor_ref) if actor_ref.is_alive() else None
        if actor is None:
            self._agent_id: UUID = _NIL
            self._name = ""
            self._role = ""
            self._team_id: UUID = _NIL
            self._squad_id: UUID | None = None
            self._is_user_proxy = False
            self._actor_type = ""
            return
        config = getattr(actor, "config", None)
        self._agent_id = getattr(actor, "agent_id", _NIL)
        self._team_id = getattr(actor, "team_id", _NIL)
        self._name = str(getattr(config, "name", "") or "")
        self._role = str(getattr(config, "role", "") or "")
        self._squad_id = getattr(config, "squad_id", None)
        # Derived from the class, never from names: any UserProxy subclass counts.
        self._is_user_proxy = bool(getattr(type(actor), "_is_user_proxy", False))
        cls = type(actor)
        self._actor_type = f"{cls.__module__}.{cls.__name__}"

    @property
    def agent_id(self) -> UUID:
        return self._agent_id

    @property
    def name(self) -> str:
        return self._name

    @property
    def role(self) -> str:
        return self._role

    @property
    def team_id(self) -> UUID:
        return self._team_id

    @property
    def squad_id(self) -> UUID | None:
        return self._squad_id

    @property
    def is_user_proxy(self) -> bool:
        return self._is_user_proxy

    @property
    def actor_ref(self) -> pykka.ActorRef[Any]:
        """The underlying pykka reference."""
        return self._actor_ref

    def is_alive(self) -> bool:
        ref = self._actor_ref
        return ref.is_alive() and actor_of(ref) is not None

    def _check_alive(self) -> pykka.ActorRef[Any]:
        ref = self._actor_ref
        if ref.actor_stopped.is_set() or actor_of(ref) is None:
            raise pykka.ActorDeadError(f"{self!r} is not running")
        return ref

    def tell(self, message: Any) -> None:
        if not self._post(message):
            raise pykka.ActorDeadError(f"{self!r} is not running")

    def ask(self, message: Any, timeout: float | None = None) -> Any:
        return self._check_alive().ask(message, timeout=timeout)

    def send(self, recipient: ActorAddress, message: Message) -> None:
        actor = actor_of(self._actor_ref)
        if actor is not None and getattr(actor, "_thread_ident", None) == threading.get_ident():
            # Already on the actor's thread: asking ourselves would deadlock.
            actor.send(recipient, message)
            return
        self._check_alive().ask(
            ProxyCall(attr_path=("send",), args=(recipient, message), kwargs={})
        )

    def serialize(self) -> ActorAddressDict:
        return {
            "__actor_address__": True,
            "__actor_type__": self._actor_type,
            "agent_id": str(self._agent_id),
            "name": self._name,
            "role": self._role,
            "team_id": str(self._team_id),
            "squad_id": "" if self._squad_id is None else str(self._squad_id),
            "is_user_proxy": self._is_user_proxy,
        }

    def _snapshot(self) -> ActorAddress:
        # Metadata never changes, so one proxy per live address is enough.
        proxy = self._proxy
        if proxy is None:
            proxy = self._proxy = ActorAddressProxy(self.serialize())
        return proxy


def address_of(actor_ref: pykka.ActorRef[Any]) -> ActorAddressImpl:
    """The live address of ``actor_ref``, reusing the one the actor cached if any."""
    actor = actor_of(actor_ref)
    cached = getattr(actor, "_my_address", None)
    if isinstance(cached, ActorAddressImpl):
        return cached
    return ActorAddressImpl(actor_ref)
