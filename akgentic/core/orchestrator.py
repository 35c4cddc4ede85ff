"""Orchestrator: root actor of a team, its event history and its teardown."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from uuid import UUID

import pykka

from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.dispatch import resolve_handlers
from akgentic.core.event_subscriber import EventSubscriber
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import (
    EventMessage,
    HandledMessage,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TelemetryBatch,
)
from akgentic.core.messages.types import TeamStoppingEvent
from akgentic.core.proxy import ProxyWrapper, interrupt_actor
from akgentic.core.utils.addresses import (
    sender_snapshot,
    snapshot_addresses,
    snapshot_model,
    snapshot_sender_only,
)

__all__ = ["STOP_TIMEOUT", "TOOL_ACTOR_PREFIX", "Orchestrator"]

logger = logging.getLogger(__name__)

STOP_TIMEOUT = 30.0
"""Default grace period of :meth:`Orchestrator.stop` before the backstop fires."""

TOOL_ACTOR_PREFIX = "#"
"""Names starting with this mark tool actors: stopped after every other member."""

M = TypeVar("M", bound=Message)


_NOBODY = object()


def _same_id(a: Any, b: UUID) -> bool:
    # ``a == b`` without the Python-level UUID.__eq__ for the usual UUID pair.
    if a is b:
        return True
    if type(a) is UUID:
        return bool(a.int == b.int)
    return bool(a == b)


_BatchHook = Callable[[Sequence[Message]], None]


def _defined_in(cls: type, name: str) -> type | None:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def _batch_hook(subscriber: EventSubscriber) -> _BatchHook | None:
    # The optional on_messages hook (see EventSubscriber) is used only where it
    # cannot bypass an on_message more specific than itself: a subclass
    # overriding on_message alone, or a handler set on the instance.
    own = getattr(subscriber, "__dict__", None) or {}
    if "on_message" in own or "on_messages" in own:
        return None
    cls = type(subscriber)
    batch_owner = _defined_in(cls, "on_messages")
    single_owner = _defined_in(cls, "on_message")
    if batch_owner is None or single_owner is None:
        return None
    if not issubclass(batch_owner, single_owner):
        return None
    hook: _BatchHook = getattr(subscriber, "on_messages")  # noqa: B009 - not in the protocol, so not an attribute to mypy
    return hook


class Orchestrator(Akgent[BaseConfig, BaseState]):
    """Root of a team: records telemetry, fans it out, keeps the roster and catalog.

    Everything the orchestrator creates reports to it. Its own sends are not
    recorded, but its own StartMessage is. ``stop()`` tears the team down in
    two phases without ever blocking the orchestrator's thread.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.messages: list[Message] = []
        self.state_dict: dict[str, BaseState] = {}
        self.agent_cards: dict[str, AgentCard] = {}
        self.team_metadata: Any = None
        self._team_services: dict[str, Any] = {}
        self.subscribers: list[EventSubscriber] = []
        self._subscribers_view: tuple[EventSubscriber, ...] = ()
        self._batch_view: tuple[tuple[EventSubscriber, _BatchHook | None], ...] = ()
        self._roster: dict[UUID, ActorAddress] = {}
        self._stop_event: threading.Event | None = None
        self._backstop: threading.Timer | None = None
        self._pending_tool_stops: list[ActorAddress] = []
        self._stop_lock = threading.Lock()
        self._finalized = False
        self._direct: dict[type, Callable[[Any], None]] = self._direct_handlers()
        self._foreign_sender: object = _NOBODY
        self._foreign_snapshot: Any = None
        self._other_sender: object = _NOBODY
        self._other_snapshot: Any = None

    def on_start(self) -> None:
        """Become the orchestrator of everything created from here, record own start."""
        self._orchestrator = self._my_address
        start = StartMessage(config=self.config, parent=self._parent)
        start.init(self._my_address, self.team_id)
        self.receiveMsg_StartMessage(start, self._my_address)

    # Its own telemetry would loop back into its own mailbox.
    def _emit(self, cls: type[Message], **fields: Any) -> None:
        return None

    def _notify_orchestrator(self, message: Message) -> None:
        return None

    _TURN_TELEMETRY: tuple[type[Message], ...] = (
        SentMessage,
        ReceivedMessage,
        ProcessedMessage,
        HandledMessage,
    )

    def _direct_handlers(self) -> dict[type, Callable[[Any], None]]:
        # Per-turn telemetry skips generic dispatch when this class handles it with
        # the base Orchestrator handler (a subclass overriding one keeps dispatch).
        direct: dict[type, Callable[[Any], None]] = {}
        for cls in self._TURN_TELEMETRY:
            base = Orchestrator.__dict__["receiveMsg_" + cls.__name__]
            if resolve_handlers(type(self), cls) == ((base, True),):
                direct[cls] = self._record_turn
        return direct

    def on_receive(self, message: Any) -> Any:
        """Dispatch without the per-turn telemetry other actors emit."""
        result: Any = None
        if type(message) is TelemetryBatch:
            # Turn telemetry of one envelope goes to each subscriber as one batch
            # (history first, then publication); anything dispatched generically
            # is published only after what preceded it, so the order holds.
            direct = self._direct
            snapshots: list[Message] = []
            for item in message:
                self._current_message = item
                if type(item) in direct:
                    snapshot = self._turn_snapshot(item)
                    if snapshot is not None:
                        snapshots.append(snapshot)
                else:
                    if snapshots:
                        self._publish_batch(snapshots)
                        snapshots = []
                    self._dispatch(item, item.sender)
            if snapshots:
                self._publish_batch(snapshots)
        elif (handler := self._direct.get(type(message))) is not None:
            self._current_message = message  # turn telemetry, the common case first
            handler(message)
        elif isinstance(message, Message):
            self._current_message = message
            result = self._dispatch(message, message.sender)
        else:
            return self._dispatch(message, None)
        self.state.notify_if_changed()
        self._current_message = None
        return result

    # ---------------------------------------------------------- subscribers

    def subscribe(self, subscriber: EventSubscriber) -> None:
        """Attach ``subscriber`` (once)."""
        if not any(s is subscriber for s in self.subscribers):
            self.subscribers.append(subscriber)
        self._refresh_views()

    def unsubscribe(self, subscriber: EventSubscriber) -> None:
        """Detach ``subscriber``; unknown subscribers are ignored."""
        self.subscribers[:] = [s for s in self.subscribers if s is not subscriber]
        self._refresh_views()

    def _refresh_views(self) -> None:
        subscribers = tuple(self.subscribers)
        self._subscribers_view = subscribers
        self._batch_view = tuple((s, _batch_hook(s)) for s in subscribers)

    @staticmethod
    def snapshot_for_subscribers(message: M) -> M:
        """``message`` with every live address replaced by its snapshot."""
        return snapshot_addresses(message)

    def _publish(self, message: Message) -> None:
        subscribers = self._subscribers_view
        if not subscribers:
            return
        snapshot = snapshot_model(message)
        for subscriber in subscribers:
            try:
                subscriber.on_message(snapshot)
            except Exception:
                logger.exception("Subscriber %r failed on %s", subscriber, type(message).__name__)

    def _call_hook(self, hook: str) -> None:
        for subscriber in tuple(self.subscribers):
            method = getattr(subscriber, hook, None)
            if method is None:
                continue
            try:
                method(self.team_id)
            except Exception:
                logger.exception("Subscriber %r failed in %s", subscriber, hook)

    # ------------------------------------------------------------ telemetry

    def _is_self(self, sender: ActorAddress | None) -> bool:
        if sender is None:
            return False
        return sender is self._my_address or _same_id(sender.agent_id, self.agent_id)

    def _track(self, message: Message) -> None:
        sender = message.sender
        if sender is None or self._is_self(sender):
            return
        if isinstance(message, StartMessage):
            self._roster[sender.agent_id] = sender
        elif isinstance(message, StopMessage):
            self._roster.pop(sender.agent_id, None)

    def receiveMsg_StartMessage(self, message: StartMessage, sender: ActorAddress | None) -> None:
        """Record a new member."""
        self.messages.append(message)
        self._track(message)
        self._publish(message)

    def receiveMsg_StopMessage(self, message: StopMessage, sender: ActorAddress | None) -> None:
        """Record a departure; during teardown, drive the next stop phase."""
        self.messages.append(message)
        self._track(message)
        if self._stop_event is None:
            self._publish(message)
        else:
            self._advance_stop()

    def _record(self, message: Message, sender: ActorAddress | None) -> None:
        if self._is_self(sender):
            return
        self.messages.append(message)
        self._publish(message)

    def _publish_batch(self, snapshots: list[Message]) -> None:
        batch = tuple(snapshots)
        for subscriber, hook in self._batch_view:
            if hook is not None:
                try:
                    hook(batch)
                except Exception:
                    logger.exception(
                        "Subscriber %r failed on a batch of %d", subscriber, len(batch)
                    )
                continue
            for snapshot in batch:
                try:
                    subscriber.on_message(snapshot)
                except Exception:
                    logger.exception(
                        "Subscriber %r failed on %s", subscriber, type(snapshot).__name__
                    )

    def _turn_snapshot(self, message: Message) -> Message | None:
        # The message goes into history and its snapshot is returned (None for the
        # orchestrator's own telemetry, or with nobody subscribed). The last two
        # senders found not to be this orchestrator are remembered: telemetry
        # alternates between a sending member and a receiving one.
        sender = message.sender
        if sender is self._foreign_sender:
            sender_snap = self._foreign_snapshot
        elif sender is self._other_sender:
            sender_snap = self._other_snapshot
        else:
            if self._is_self(sender):
                return None
            sender_snap = sender_snapshot(sender)
            self._other_sender, self._other_snapshot = self._foreign_sender, self._foreign_snapshot
            self._foreign_sender, self._foreign_snapshot = sender, sender_snap
        self.messages.append(message)
        if not self._subscribers_view:
            return None
        return snapshot_sender_only(message, sender_snap)

    def _record_turn(self, message: Message) -> None:
        # _record (and _publish) for Sent/Received/Processed/Handled, reached
        # without dispatch.
        snapshot = self._turn_snapshot(message)
        if snapshot is None:
            return
        for subscriber in self._subscribers_view:
            try:
                subscriber.on_message(snapshot)
            except Exception:
                logger.exception("Subscriber %r failed on %s", subscriber, type(message).__name__)

    def receiveMsg_SentMessage(self, message: SentMessage, sender: ActorAddress | None) -> None:
        """Record a send."""
        self._record(message, sender)

    def receiveMsg_ReceivedMessage(
        self, message: ReceivedMessage, sender: ActorAddress | None
    ) -> None:
        """Record the start of a turn."""
        self._record(message, sender)

    def receiveMsg_ProcessedMessage(
        self, message: ProcessedMessage, sender: ActorAddress | None
    ) -> None:
        """Record the end of a turn."""
        self._record(message, sender)

    def receiveMsg_HandledMessage(
        self, message: HandledMessage, sender: ActorAddress | None
    ) -> None:
        """Record a message absorbed into a run."""
        self._record(message, sender)

    def receiveMsg_NotificationMessage(
        self, message: NotificationMessage, sender: ActorAddress | None
    ) -> None:
        """Record errors, warnings and other notifications."""
        self._record(message, sender)

    def receiveMsg_StateChangedMessage(
        self, message: StateChangedMessage, sender: ActorAddress | None
    ) -> None:
        """Keep the latest state per agent (not part of the history)."""
        if sender is not None:
            self.state_dict[str(sender.agent_id)] = message.state
        self._publish(message)

    def receiveMsg_EventMessage(self, message: EventMessage, sender: ActorAddress | None) -> None:
        """Record a domain event."""
        self.messages.append(message)
        self._publish(message)

    # --------------------------------------------------------------- queries

    def get_team(self) -> list[ActorAddress]:
        """Members started and not stopped (tool actors and user proxies included)."""
        return list(self._roster.values())

    def get_team_member(self, name: str) -> ActorAddress | None:
        """First member whose name is ``name``."""
        for member in self._roster.values():
            if member.name == name:
                return member
        return None

    def get_messages(
        self, sender: ActorAddress | None = None, message_type: type[Message] | None = None
    ) -> list[Message]:
        """The history, optionally filtered by sender and message class."""
        if sender is None and message_type is None:
            return self.messages
        return [
            m
            for m in self.messages
            if (sender is None or m.sender == sender)
            and (message_type is None or isinstance(m, message_type))
        ]

    def get_events(
        self, agent_id: str | UUID | None = None, event_class: type | None = None
    ) -> list[EventMessage]:
        """EventMessages, optionally by sender id and payload class."""
        wanted = None if agent_id is None else str(agent_id)
        return [
            m
            for m in self.messages
            if isinstance(m, EventMessage)
            and (wanted is None or (m.sender is not None and str(m.sender.agent_id) == wanted))
            and (event_class is None or isinstance(m.event, event_class))
        ]

    def get_states(self) -> dict[str, BaseState]:
        """Latest published state per agent id."""
        return dict(self.state_dict)

    # --------------------------------------------------------------- catalog

    def register_agent_profile(self, card: AgentCard) -> None:
        """Add ``card`` to the catalog under ``card.role`` (replacing any previous)."""
        self.agent_cards[card.role] = card

    def register_agent_profiles(self, cards: list[AgentCard]) -> None:
        """Register several cards."""
        for card in cards:
            self.register_agent_profile(card)

    def get_agent_catalog(self) -> dict[str, AgentCard]:
        """Role -> card."""
        return dict(self.agent_cards)

    def get_agent_profile(self, role: str) -> AgentCard | None:
        """Card of ``role``, if registered."""
        return self.agent_cards.get(role)

    def get_profiles_by_skill(self, skill: str) -> list[AgentCard]:
        """Cards listing ``skill``."""
        return [card for card in self.agent_cards.values() if card.has_skill(skill)]

    def get_available_roles(self) -> list[str]:
        """Every registered role."""
        return list(self.agent_cards)

    def get_available_skills(self) -> list[str]:
        """Sorted union of all skills."""
        return sorted({skill for card in self.agent_cards.values() for skill in card.skills})

    def get_metadata(self) -> Any:
        """Team metadata model (shared reference: treat as read-only)."""
        return self.team_metadata

    def set_metadata(self, metadata: Any) -> None:
        """Replace the team metadata wholesale (None clears it)."""
        self.team_metadata = metadata

    def set_team_service(self, name: str, service: Any) -> None:
        """Share ``service`` with the team's members in this process under ``name``.

        What the builder of a team attaches before the members start (the team
        budget, under ``"budget"``); members ask for it with :meth:`team_service`
        and keep the object, which must be thread-safe: they use it from their own
        threads. A resumed team gets a fresh one, rebuilt by whoever attaches it.
        """
        self._team_services[name] = service

    def team_service(self, name: str) -> Any:
        """The object attached under ``name`` (:meth:`set_team_service`), or None."""
        return self._team_services.get(name)

    # ------------------------------------------------------ children & emits

    def getChildrenOrCreate(
        self, actor_class: type[Akgent[Any, Any]], config: BaseConfig, **kwargs: Any
    ) -> ActorAddress:
        """The live child named ``config.name``, created if there is none.

        Runs on the orchestrator's thread against its own child list, so
        concurrent callers are serialised and a singleton is created once.
        """
        for child in self._children:
            if child.name == config.name and child.is_alive():
                return child
        return self.createActor(actor_class, config=config, **kwargs)

    def emitMessage(self, message: Message) -> None:
        """Record and publish ``message`` as the team's own; no agent handles it."""
        message.init(self._my_address, self.team_id)
        self.messages.append(message)
        self._publish(message)

    def restore_message(self, message: Message) -> None:
        """Replay a stored message into history and subscribers."""
        if isinstance(message, EventMessage) and isinstance(message.event, TeamStoppingEvent):
            return
        self.messages.append(message)
        self._track(message)
        self._publish(message)

    def end_restoration(self) -> None:
        """Mark the end of a replay."""
        self._restoring = False

    def is_restoring(self) -> bool:
        """True while the team is being restored from its event log.

        Tool actors respawned by a resume ask this before delivering anything to a
        member: until restoration ends, a member's history and state may still be
        on their way back.
        """
        return bool(self._restoring)

    # ------------------------------------------------------------------ stop

    def stop(self, grace_timeout: float = STOP_TIMEOUT) -> threading.Event:  # type: ignore[override]
        """Begin teardown and return an Event set once the orchestrator has stopped.

        Non-blocking: ordinary members are asked to stop (newest first), tool
        actors (``#`` names) only once no ordinary member is left, and the
        orchestrator itself once the roster is empty. A backstop timer forces
        the end after ``grace_timeout`` seconds. Calling it again returns the
        same Event.
        """
        if self._stop_event is not None:
            return self._stop_event
        self.emitMessage(EventMessage(event=TeamStoppingEvent()))
        self._call_hook("on_stop_request")
        event = self._stop_event = threading.Event()
        for child in reversed(self._children):
            if not child.is_alive():
                continue
            if child.name.startswith(TOOL_ACTOR_PREFIX):
                self._pending_tool_stops.append(child)
                continue
            interrupt_actor(child)
            with contextlib.suppress(pykka.ActorDeadError):
                ProxyWrapper(child, ask=False).stop()
        self._release_tools_if_ready()
        backstop = threading.Timer(grace_timeout, self._force_stop)
        backstop.daemon = True
        self._backstop = backstop
        backstop.start()
        if not self._roster:
            self._finalize()
        return event

    def _advance_stop(self) -> None:
        self._release_tools_if_ready()
        if not self._roster:
            self._finalize()

    def _release_tools_if_ready(self) -> None:
        if any(not m.name.startswith(TOOL_ACTOR_PREFIX) for m in self._roster.values()):
            return
        self._flush_tool_stops()

    def _flush_tool_stops(self) -> None:
        with self._stop_lock:
            pending, self._pending_tool_stops = self._pending_tool_stops, []
        for tool in pending:
            with contextlib.suppress(pykka.ActorDeadError):
                ProxyWrapper(tool, ask=False).stop()

    def _finalize(self) -> None:
        with self._stop_lock:
            if self._finalized:
                return
            self._finalized = True
        if self._backstop is not None:
            self._backstop.cancel()
        self.actor_ref.stop(block=False)

    def _force_stop(self) -> None:
        if not self.actor_ref.is_alive():
            return
        logger.warning(
            "Team %s did not stop within its grace period; forcing the orchestrator down",
            self.team_id,
        )
        self._flush_tool_stops()
        self.actor_ref.stop(block=False)

    def on_stop(self) -> None:
        """Run subscribers' ``on_stop``, drop them, and signal the stop Event."""
        if self._backstop is not None:
            self._backstop.cancel()
        self._call_hook("on_stop")
        super().on_stop()
        self.subscribers.clear()
        self._refresh_views()
        # A stopped actor sits in reference cycles (its address, its ref) that only a
        # full collection frees; its history would wait there with it and make that
        # collection, which holds every thread, as long as the team's whole log.
        self.messages = []
        self.state_dict = {}
        if self._stop_event is None:
            self._stop_event = threading.Event()
        self._stop_event.set()
