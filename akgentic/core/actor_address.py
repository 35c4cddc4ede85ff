"""Addresses of actors: the abstract handle plus its snapshot and stopped forms.

An :class:`ActorAddress` is what agents hold to talk to each other. Three
concrete kinds exist:

* ``ActorAddressImpl`` (in :mod:`akgentic.core.actor_address_impl`) wraps a live
  pykka reference and can deliver messages;
* :class:`ActorAddressProxy` is a read-only snapshot rebuilt from a serialized
  address (what subscribers and persisted events carry);
* :class:`ActorAddressStopped` is the same snapshot for an actor known to be gone.

Equality is by ``agent_id`` *and* concrete class, so a live address never equals
a snapshot of the same actor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, TypedDict
from uuid import UUID

from pydantic_core import to_json

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = [
    "ActorAddress",
    "ActorAddressDict",
    "ActorAddressProxy",
    "ActorAddressStopped",
]

_NIL = UUID(int=0)

# Functional syntax: the dunder keys are the persisted wire format.
ActorAddressDict = TypedDict(
    "ActorAddressDict",
    {
        "__actor_address__": bool,
        "__actor_type__": str,
        "agent_id": str,
        "name": str,
        "role": str,
        "team_id": str,
        "squad_id": str,
        "is_user_proxy": bool,
    },
)


class ActorAddress(ABC):
    """Abstract handle on an actor, identified by ``agent_id``."""

    __slots__ = ()

    @property
    @abstractmethod
    def agent_id(self) -> UUID:
        """Unique id of the actor."""

    @property
    @abstractmethod
    def name(self) -> str:
        """``config.name`` of the actor."""

    @property
    @abstractmethod
    def role(self) -> str:
        """``config.role`` of the actor."""

    @property
    @abstractmethod
    def team_id(self) -> UUID:
        """Team the actor belongs to."""

    @property
    @abstractmethod
    def squad_id(self) -> UUID | None:
        """Squad (sub-team) of the actor, if any."""

    @property
    @abstractmethod
    def is_user_proxy(self) -> bool:
        """True when the actor is a :class:`~akgentic.core.user_proxy.UserProxy`."""

    @abstractmethod
    def send(self, recipient: ActorAddress, message: Message) -> None:
        """Make *this* actor send ``message`` to ``recipient``."""

    @abstractmethod
    def is_alive(self) -> bool:
        """Whether messages can currently be delivered to the actor."""

    @abstractmethod
    def serialize(self) -> ActorAddressDict:
        """Return the persisted dict form of the address."""

    def tell(self, message: Any) -> None:
        """Deliver ``message`` without waiting; only live addresses can."""
        raise RuntimeError(f"{type(self).__name__} {self.name} cannot deliver messages")

    def ask(self, message: Any, timeout: float | None = None) -> Any:
        """Deliver ``message`` and wait for the reply; only live addresses can."""
        raise RuntimeError(f"{type(self).__name__} {self.name} cannot deliver messages")

    def _snapshot(self) -> ActorAddress:
        """Address to hand to subscribers; live addresses return a proxy."""
        return self

    def __repr__(self) -> str:
        return f"<ActorAddress {self.role} {self.name} ({self.agent_id})>"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.agent_id == self.agent_id

    def __hash__(self) -> int:
        return hash(self.agent_id)


def _uuid_or_none(value: Any) -> UUID | None:
    if value in (None, ""):
        return None
    return value if isinstance(value, UUID) else UUID(str(value))


class ActorAddressProxy(ActorAddress):
    """Read-only snapshot of an address, rebuilt from its serialized dict.

    It always reports itself alive (it cannot know better) and refuses to
    deliver messages: resolve it to a live address first.
    """

    __slots__ = ("_data", "_agent_id", "_team_id", "_squad_id", "_dump", "_json")  # noqa: RUF023 - grouped by role, not alphabetical

    def __init__(self, address_dict: ActorAddressDict | dict[str, Any]) -> None:
        data: dict[str, Any] = dict(address_dict)
        self._data = data
        self._dump: ActorAddressDict | None = None
        self._json: str | None = None
        self._agent_id = _uuid_or_none(data.get("agent_id")) or _NIL
        self._team_id = _uuid_or_none(data.get("team_id")) or _NIL
        self._squad_id = _uuid_or_none(data.get("squad_id"))

    @property
    def agent_id(self) -> UUID:
        return self._agent_id

    @property
    def name(self) -> str:
        return str(self._data.get("name", ""))

    @property
    def role(self) -> str:
        return str(self._data.get("role", ""))

    @property
    def team_id(self) -> UUID:
        return self._team_id

    @property
    def squad_id(self) -> UUID | None:
        return self._squad_id

    @property
    def is_user_proxy(self) -> bool:
        return bool(self._data.get("is_user_proxy", False))

    @property
    def actor_type(self) -> str:
        """Dotted path of the agent class this address pointed to ('' if unknown)."""
        return str(self._data.get("__actor_type__", ""))

    def send(self, recipient: ActorAddress, message: Message) -> None:
        raise RuntimeError(
            f"{type(self).__name__} {self.name} is a snapshot and cannot send; "
            "resolve it to a live address first"
        )

    def is_alive(self) -> bool:
        return True

    def serialize(self) -> ActorAddressDict:
        # A snapshot never changes: build the dict once (formatting three UUIDs
        # is most of the cost) and hand out copies, which callers may modify.
        return self._shared_dump().copy()

    def _shared_dump(self) -> ActorAddressDict:
        """The dict :meth:`serialize` copies: shared, so never to be modified."""
        dump = self._dump
        if dump is None:
            dump = self._dump = {
                "__actor_address__": True,
                "__actor_type__": self.actor_type,
                "agent_id": str(self._agent_id),
                "name": self.name,
                "role": self.role,
                "team_id": str(self._team_id),
                "squad_id": "" if self._squad_id is None else str(self._squad_id),
                "is_user_proxy": self.is_user_proxy,
            }
        return dump

    def _shared_json(self) -> str:
        """The compact JSON text of :meth:`_shared_dump`, written once.

        Every stored event carries its sender's (and often its recipient's)
        address: the same text each time, so it is encoded once per snapshot.
        """
        text = self._json
        if text is None:
            text = self._json = to_json(self._shared_dump()).decode("utf-8")
        return text


class ActorAddressStopped(ActorAddressProxy):
    """Snapshot of an actor that is known to have stopped."""

    __slots__ = ()

    def is_alive(self) -> bool:
        return False
