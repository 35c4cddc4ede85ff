"""TeamRuntime: the live handle on a running team.

Returned by :meth:`TeamManager.create_team` / :meth:`TeamManager.resume_team`
(or :meth:`TeamFactory.build`). Four verbs put messages into the team:

* :meth:`TeamRuntime.send` - to every supervisor, sent by the entry point;
* :meth:`TeamRuntime.send_to` - to one named member, sent by the entry point;
* :meth:`TeamRuntime.send_from_to` - from one named member to another;
* :meth:`TeamRuntime.emitMessage` - onto the record only (subscribers and the
  event store); no agent handles it.

The first three take a ``str`` (wrapped in the card's ``message_types[0]``) or a
ready :class:`~akgentic.core.messages.message.Message`, passed through as is.
All four are asynchronous: they return before anything was processed; use
:meth:`TeamRuntime.wait_idle` to wait until the team has nothing in flight.
A runtime of a managed team carries a :class:`~akgentic.team.backpressure.SendGate`:
when the team's record lags too far behind (the store cannot keep up), the
verbs wait for it before putting the message in, and raise
:class:`~akgentic.team.backpressure.BackpressureTimeoutError` if it does not
catch up within the gate's timeout.

A runtime of a managed team outlives its team's passivation: when its actors
were stopped for being idle, the next verb asks the manager to activate the
team (:meth:`TeamManager.activate`) and carries on with the new actors, so a
handle held across a passivation keeps working (docs/virtual-teams.md).

The runtime is a serializable model: its addresses are fields, and the proxies
on them are rebuilt from the addresses (resolving snapshots to live actors by
``agent_id``) in ``model_post_init``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast
from uuid import UUID

from pydantic import Field, PrivateAttr

from akgentic.core.actor_address import ActorAddress, ActorAddressProxy
from akgentic.core.actor_refs import ActorDeadError, call_teller
from akgentic.core.actor_system import ActorSystem
from akgentic.core.agent import Akgent
from akgentic.core.messages.message import Message, text_message_factory
from akgentic.core.orchestrator import Orchestrator
from akgentic.core.proxy import ProxyWrapper, actor_ref_of
from akgentic.core.utils.addresses import hydrate_addresses
from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.team.backpressure import SendGate
from akgentic.team.card import TeamCard
from akgentic.team.subscribers.activity import ActivityMonitor

__all__ = ["TeamRuntime"]

_ASK_TIMEOUT = 30.0


#: message class -> its validation-free builder from a ``str`` (None: validate).
_text_builders: dict[type[Message], Callable[[str], Message] | None] = {}


def _text_builder(message_type: type[Message]) -> Callable[[str], Message] | None:
    try:
        return _text_builders[message_type]
    except KeyError:
        build = _text_builders[message_type] = text_message_factory(message_type)
        return build


class TeamRuntime(SerializableBaseModel):
    """Live handle on a running team (see the module docstring)."""

    id: UUID
    team: TeamCard
    orchestrator_addr: ActorAddress
    entry_addr: ActorAddress
    supervisor_addrs: dict[str, ActorAddress] = Field(default_factory=dict)
    addrs: dict[str, ActorAddress] = Field(default_factory=dict)
    actor_system: ActorSystem | None = Field(default=None, exclude=True)

    _orchestrator_ask: Any = PrivateAttr(default=None)
    _orchestrator_tell: Any = PrivateAttr(default=None)
    _entry_tell: Any = PrivateAttr(default=None)
    _entry_send: Any = PrivateAttr(default=None)
    _monitor: ActivityMonitor | None = PrivateAttr(default=None)
    _gate: SendGate | None = PrivateAttr(default=None)
    _senders: dict[UUID, ActorAddress] = PrivateAttr(default_factory=dict)
    _activator: Callable[[], TeamRuntime] | None = PrivateAttr(default=None)
    _closing: bool = PrivateAttr(default=False)

    def model_post_init(self, context: Any, /) -> None:
        """Resolve snapshot addresses to live ones and build the proxies (idempotent).

        A runtime loaded from a dump finds its actor system in the validation
        context (``model_validate(data, context={"actor_system": system})``) or
        through :meth:`bind`; until then it is inert.
        """
        if self.actor_system is None and isinstance(context, dict):
            self.actor_system = context.get("actor_system")
        if self.actor_system is not None:
            self._bind()

    def bind(self, actor_system: ActorSystem) -> TeamRuntime:
        """Attach a runtime loaded from a dump to the actor system its team runs on."""
        self.actor_system = actor_system
        self._bind()
        return self

    def _bind(self) -> None:
        if self._orchestrator_ask is not None:
            return
        if self.actor_system is None:
            raise RuntimeError("this runtime is not bound to an actor system: call bind() first")
        self.orchestrator_addr = self._live(self.orchestrator_addr)
        self.entry_addr = self._live(self.entry_addr)
        self.supervisor_addrs = {k: self._live(v) for k, v in self.supervisor_addrs.items()}
        self.addrs = {k: self._live(v) for k, v in self.addrs.items()}
        self._orchestrator_ask = ProxyWrapper(
            self.orchestrator_addr, ask=True, timeout=_ASK_TIMEOUT
        )
        self._orchestrator_tell = ProxyWrapper(self.orchestrator_addr, ask=False)
        self._entry_tell = ProxyWrapper(self.entry_addr, ask=False)
        # ``self._entry_tell.send`` (the same ProxyCall), minus its call chain.
        self._entry_send = call_teller(actor_ref_of(self.entry_addr), "send")

    def _live(self, address: ActorAddress) -> ActorAddress:
        if not isinstance(address, ActorAddressProxy):
            return address
        system = self.actor_system
        live = system.get_actor(address) if system is not None else None
        if live is None:
            raise ValueError(f"{address.name} ({address.agent_id}) is not running")
        return live

    def attach_monitor(self, monitor: ActivityMonitor) -> None:
        """Use ``monitor`` (already subscribed to the orchestrator) for :meth:`wait_idle`."""
        self._monitor = monitor

    def attach_gate(self, gate: SendGate | None) -> None:
        """Hold the verbs back by ``gate`` while the team's record lags (None: never)."""
        self._gate = gate

    def attach_activator(self, activator: Callable[[], TeamRuntime] | None) -> None:
        """Bring the team back through ``activator`` when a verb finds its actors stopped."""
        self._activator = activator

    def mark_closing(self, closing: bool) -> None:
        """The manager is passivating the team: verbs wait for it and for the next activation."""
        self._closing = closing

    @property
    def closing(self) -> bool:
        """True while the team is being passivated under this handle."""
        return self._closing

    def _ensure_live(self) -> None:
        """Adopt a fresh activation when the team was passivated under this handle."""
        if self._activator is not None and (self._closing or not self.entry_addr.is_alive()):
            self._revive()

    def _revive(self) -> None:
        activator = self._activator
        if activator is None:
            raise ActorDeadError(f"team {self.id} is not running")
        fresh = activator()
        if fresh is self:
            return
        self._closing = False  # this handle now stands for the new activation
        self.team = fresh.team
        self.orchestrator_addr = fresh.orchestrator_addr
        self.entry_addr = fresh.entry_addr
        self.supervisor_addrs = dict(fresh.supervisor_addrs)
        self.addrs = dict(fresh.addrs)
        self.actor_system = fresh.actor_system
        self._orchestrator_ask = self._orchestrator_tell = None
        self._entry_tell = self._entry_send = None
        self._senders = {}
        self._monitor = fresh._monitor
        self._gate = fresh._gate
        self._bind()

    @property
    def gate(self) -> SendGate | None:
        """The admission control of the verbs, if the team is managed."""
        return self._gate

    # -- views ------------------------------------------------------------
    @property
    def team_name(self) -> str | None:
        """The card's name (descriptive only; teams are identified by :attr:`id`)."""
        return self.team.name

    @property
    def message_types(self) -> list[type[Message]]:
        """The message classes of the team; the first wraps plain strings."""
        return list(self.team.message_types)

    @property
    def orchestrator_proxy(self) -> Orchestrator:
        """Blocking proxy on the orchestrator."""
        self._bind()
        proxy: Orchestrator = self._orchestrator_ask
        return proxy

    @property
    def entry_proxy(self) -> Akgent[Any, Any]:
        """Fire-and-forget proxy on the entry point."""
        self._bind()
        proxy: Akgent[Any, Any] = self._entry_tell
        return proxy

    @property
    def members(self) -> list[ActorAddress]:
        """The current roster (agents hired since the start included)."""
        self._ensure_live()
        return self.orchestrator_proxy.get_team()

    # -- the four verbs -----------------------------------------------------
    def _wrap(self, content: str | Message) -> Message:
        self._bind()
        return self._message(content)

    def _message(self, content: str | Message) -> Message:
        if isinstance(content, Message):
            return content
        message_type = self.team.default_message_type
        if message_type is None:
            raise RuntimeError(
                "No message type declared for this team: add message_types to the card "
                "or send a Message instance"
            )
        if type(content) is str:
            build = _text_builder(message_type)
            if build is not None:
                return build(content)
        message: Message = message_type(content=content)
        return message

    def _admit(self) -> None:
        gate = self._gate
        if gate is not None:
            gate.admit()

    def send(self, content: str | Message) -> None:
        """Send ``content`` to every supervisor, from the entry point (the same instance)."""
        # The hot path of a team's input: private attributes read once, from their dict
        # (each ``self._x`` goes through pydantic's Python-level __getattr__).
        private = cast(dict[str, Any], self.__pydantic_private__)
        if private["_entry_send"] is None:
            self._bind()
        message: Message | None = None
        if type(content) is str:
            types = self.team.message_types
            build = _text_builders.get(types[0]) if types else None
            if build is not None:
                message = build(content)
        if message is None:
            message = self._message(content)
        gate = private["_gate"]
        if gate is not None:
            gate.admit()
        if private["_closing"] and private["_activator"] is not None:
            # Being passivated: hand the message to the team's next activation.
            self._revive()
            self.send(message)
            return
        entry = self.entry_addr
        private["_senders"][entry.agent_id] = entry
        tell = private["_entry_send"]
        try:
            for recipient in self.supervisor_addrs.values():
                tell(recipient, message)
        except ActorDeadError:
            # The entry point is gone (its first tell raised, so nothing went in):
            # a passivated team comes back and gets the message.
            if private["_activator"] is None:
                raise
            self._revive()
            self.send(message)

    def send_to(self, name: str, content: str | Message) -> None:
        """Send ``content`` to the member called ``name``, from the entry point."""
        self._ensure_live()
        recipient = self.resolve(name)
        message = self._wrap(content)
        self._admit()
        self._senders[self.entry_addr.agent_id] = self.entry_addr
        self._entry_tell.send(recipient, message)

    def send_from_to(self, sender_name: str, recipient_name: str, content: str | Message) -> None:
        """Send ``content`` to ``recipient_name`` as if ``sender_name`` had sent it."""
        self._ensure_live()
        sender = self.resolve(sender_name)
        recipient = self.resolve(recipient_name)
        message = self._wrap(content)
        self._admit()
        self._senders[sender.agent_id] = sender
        ProxyWrapper(sender, ask=False).send(recipient, message)

    def emitMessage(self, message: Message) -> None:
        """Publish ``message`` on the team's record; no agent processes it."""
        self._ensure_live()
        self._bind()
        self._admit()
        self._orchestrator_tell.emitMessage(message)

    def process_human_input(self, content: str, message: Message) -> None:
        """Answer ``message`` as the human: its recipient must be a UserProxy of the team."""
        self._ensure_live()
        recipient = message.recipient
        if recipient is None:
            raise ValueError("the message being answered has no recipient (which human?)")
        target = self._member(recipient)
        if target is None or not target.is_user_proxy:
            raise ValueError(f"{recipient.name} is not a user proxy of team {self.id}")
        hydrated = hydrate_addresses(message, self._resolve_snapshot)
        ProxyWrapper(target, ask=True, timeout=_ASK_TIMEOUT).process_human_input(content, hydrated)

    # -- lookups ------------------------------------------------------------
    def resolve(self, name: str) -> ActorAddress:
        """The live address of the member called ``name`` (``ValueError`` if there is none)."""
        self._ensure_live()
        found = self.orchestrator_proxy.get_team_member(name)
        if found is None:
            known = sorted(m.name for m in self.members)
            raise ValueError(
                f"team {self.id} has no member named {name!r} (members: {', '.join(known)})"
            )
        return self._to_live(found)

    def _member(self, address: ActorAddress) -> ActorAddress | None:
        for member in self.members:
            if member.agent_id == address.agent_id:
                return self._to_live(member)
        if address.name:
            found = self.orchestrator_proxy.get_team_member(address.name)
            if found is not None:
                return self._to_live(found)
        return None

    def _to_live(self, address: ActorAddress) -> ActorAddress:
        if not isinstance(address, ActorAddressProxy):
            return address
        system = self.actor_system
        live = system.get_actor(address) if system is not None else None
        if live is None:
            raise ValueError(f"member {address.name} of team {self.id} is not running")
        return live

    def _resolve_snapshot(self, address: ActorAddress) -> ActorAddress:
        live = self._member(address)
        return address if live is None else live

    # -- waiting ------------------------------------------------------------
    def wait_idle(self, timeout: float | None = 60.0) -> bool:
        """Wait until no message is in flight in the team; ``False`` on timeout.

        Every actor this runtime sent through is asked first, then the
        orchestrator: mailboxes are FIFO, so once both answered, the telemetry of
        every send made before this call has been recorded.
        """
        if self._monitor is None:
            raise RuntimeError("this runtime has no activity monitor (build it with TeamFactory)")
        # The entry point always counts: a copy of this runtime (from its dump) sends
        # through the same entry actor without this object knowing.
        senders = {self.entry_addr.agent_id: self.entry_addr, **self._senders}
        for sender in list(senders.values()):
            if sender.is_alive():
                ProxyWrapper(sender, ask=True, timeout=timeout).get_mailbox()
        self.orchestrator_proxy.get_team()
        return self._monitor.wait_idle(timeout)

    def __repr__(self) -> str:
        return f"TeamRuntime(id={self.id}, team={self.team_name!r}, members={sorted(self.addrs)})"

    __str__ = __repr__
