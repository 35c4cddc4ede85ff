"""Akgent: the base actor of every agent, tool actor and orchestrator."""

from __future__ import annotations

import contextlib
import logging
import threading
import traceback as tb_module
from collections.abc import Callable
from types import TracebackType
from typing import Any, ClassVar, Generic, TypeVar, cast
from uuid import UUID, uuid4

import pykka

from akgentic.core._pykka_seam import SeamActor, live_poster
from akgentic.core.actor_address import ActorAddress, ActorAddressDict, ActorAddressStopped
from akgentic.core.actor_address_impl import ActorAddressImpl, address_of
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.agent_team import TeamAccess
from akgentic.core.dispatch import SUPER, Handler, resolve_handlers
from akgentic.core.errors import WarningError
from akgentic.core.mailbox import peek_messages, take_messages
from akgentic.core.messages.message import (
    Message,
    StopRecursively,
    fast_construct,
    fast_factory,
    turn_telemetry_factory,
)
from akgentic.core.messages.orchestrator import (
    ErrorMessage,
    EventMessage,
    HandledMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TelemetryBatch,
    WarningMessage,
)
from akgentic.core.proxy import ProxyWrapper, interrupt_actor

__all__ = ["SUPER", "Akgent", "AkgentDeserializeContext", "WarningError"]

logger = logging.getLogger(__name__)

ConfigType = TypeVar("ConfigType", bound=BaseConfig)
StateType = TypeVar("StateType", bound=BaseState)
T = TypeVar("T")
M = TypeVar("M", bound=Message)

_TURN_TYPES = (Message, TelemetryBatch)
_received = turn_telemetry_factory(ReceivedMessage)
_processed = turn_telemetry_factory(ProcessedMessage)
_handled = turn_telemetry_factory(HandledMessage)
_MESSAGE_INIT = Message.init
# What ``_emit(SentMessage, message=..., recipient=...)`` builds, plan resolved once.
_sent = fast_factory(SentMessage, ("message", "recipient", "sender", "team_id", "parent_id"))


def _drop(payload: Any) -> None:
    return None


def _poster(address: ActorAddress) -> Callable[[Any], object]:
    """Deliver telemetry to ``address``, silently dropping it once the actor is gone.

    For a live address the envelope goes straight into the inbox: the liveness
    check and delivery of ``ActorAddressImpl.tell`` without its call chain (a
    TelemetryBatch is its own envelope).
    """
    if isinstance(address, ActorAddressImpl):
        post: Callable[[Any], bool] = live_poster(address.actor_ref, bare=TelemetryBatch)
        return post  # its bool (posted or not) is of no use here

    def tell(payload: Any) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            address.tell(payload)

    return tell


def _as_uuid(value: UUID | str | None) -> UUID:
    if value is None:
        return uuid4()
    return value if isinstance(value, UUID) else UUID(str(value))


class AkgentDeserializeContext:
    """Resolves serialized addresses to live team members of ``akgent``'s team.

    Lookup is by ``agent_id``; an address whose actor is not in the roster comes
    back as :class:`ActorAddressStopped`.
    """

    def __init__(self, akgent: Akgent[Any, Any]) -> None:
        self.akgent = akgent

    def resolve_address(self, address: ActorAddressDict) -> ActorAddress:
        """Live address for ``address`` if its actor is in the team, else a stopped one."""
        agent_id = str(address.get("agent_id", ""))
        if agent_id:
            for member in self.akgent._team_members():
                if str(member.agent_id) == agent_id:
                    return member
        return ActorAddressStopped(address)


class Akgent(TeamAccess, SeamActor, Generic[ConfigType, StateType]):
    """Base actor: dispatch by ``receiveMsg_<Type>``, telemetry, state checkpoints.

    Construct through ``createActor`` (on an ActorSystem or a parent actor), not
    directly. ``__init__`` runs on the creating thread; initialise runtime
    resources in :meth:`on_start`, which runs on the actor's own thread.

    A turn that raises is reported (an ``ErrorMessage``, or a ``WarningMessage``
    for a :class:`WarningError`) and the actor carries on. An ``on_start`` that
    raises is reported the same way and then the actor stops, as a pykka actor
    does: it sends its ``StopMessage``, leaves the roster, and asks waiting in
    its inbox fail with ``ActorDeadError``.
    """

    SUPER: ClassVar[Any] = SUPER
    _is_user_proxy: ClassVar[bool] = False
    _turn_types: ClassVar[tuple[type, ...]] = _TURN_TYPES

    def __init__(
        self,
        agent_id: UUID | str | None = None,
        team_id: UUID | str | None = None,
        config: ConfigType | None = None,
        user_id: str | None = None,
        user_email: str | None = None,
        parent: ActorAddress | None = None,
        orchestrator: ActorAddress | None = None,
        restoring: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        self._current_message: Message | None = None
        self._children: list[ActorAddress] = []
        self.agent_id: UUID = _as_uuid(agent_id)
        self.team_id: UUID = _as_uuid(team_id)
        self.config: ConfigType = config if config is not None else cast(ConfigType, BaseConfig())
        self._user_id = user_id
        self._user_email = user_email
        self._parent = parent
        self._orchestrator = orchestrator
        self._restoring = restoring
        self._orchestrator_proxy: Any = None
        self._pending_telemetry: list[Message] = TelemetryBatch()
        inbox: Any = self.actor_inbox
        self._inbox_deque: Any = getattr(inbox, "queue", None)
        self._chains: dict[type, tuple[Handler, ...]] = {}
        self._sink_target: ActorAddress | None = None
        self._sink: Callable[[Any], object] = _drop
        self.state: StateType = cast(StateType, BaseState())
        if not self.config.name:
            self.config.name = str(self.actor_ref)
        if not self.config.role:
            self.config.role = type(self).__name__
        self._my_address = ActorAddressImpl(self.actor_ref)
        # send() builds its SentMessage itself unless a subclass reroutes _emit.
        self._inline_sent = type(self)._emit is Akgent._emit
        self._inline_dispatch = type(self)._dispatch is Akgent._dispatch
        self._notify_orchestrator(StartMessage(config=self.config, parent=self._parent))

    # ------------------------------------------------------------ properties

    @property
    def myAddress(self) -> ActorAddress:
        """This actor's live address (one cached instance)."""
        return self._my_address

    @property
    def user_id(self) -> str | None:
        """Id of the user the team works for."""
        return self._user_id

    @property
    def user_email(self) -> str | None:
        """E-mail of the user the team works for."""
        return self._user_email

    @property
    def parent(self) -> ActorAddress | None:
        """Address of the actor that created this one."""
        return self._parent

    @property
    def orchestrator(self) -> ActorAddress | None:
        """Address of the team's orchestrator, if any."""
        return self._orchestrator

    # ------------------------------------------------------------- lifecycle

    def on_start(self) -> None:
        """Runs on the actor's thread before any message; override for setup."""

    def on_stop(self) -> None:
        """Checkpoint state and report the stop; call ``super().on_stop()`` last."""
        self._checkpoint_guarded()
        self._notify_orchestrator(StopMessage())
        logger.debug("%s stopped", self.config.name)

    def interrupt(self) -> None:
        """End long work in flight because this actor is being stopped (default: nothing).

        Called on the stopping thread, not the actor's own (see
        :func:`~akgentic.core.proxy.interrupt_actor`), so it must be thread-safe
        and quick. An LLM agent cancels its model request here.
        """

    def cancel_requested(self, message: Message) -> None:
        """``message``, just queued here by a human, may cancel the work in flight (default: no).

        Called on the sender's thread (see :func:`~akgentic.core.proxy.offer_cancel`),
        so it must be thread-safe and quick. An LLM agent ends its run on a ``/stop``.
        """

    def stop(self) -> None:
        """Checkpoint, stop children (waiting for each), then stop after the queued mail."""
        self._checkpoint_guarded()
        self.stop_children(blocking=True)
        if not self.actor_stopped.is_set():
            super().stop()

    def stop_children(self, blocking: bool = True) -> None:
        """Stop every live child in creation order; ``blocking`` waits for each to accept."""
        for child in list(self._children):
            if not child.is_alive():
                self._children.remove(child)
                continue
            interrupt_actor(child)
            try:
                if blocking:
                    ProxyWrapper(child).stop()
                    self._children.remove(child)
                else:
                    ProxyWrapper(child, ask=False).stop()
            except pykka.ActorDeadError:
                if child in self._children:
                    self._children.remove(child)

    def receiveMsg_StopRecursively(self, message: StopRecursively) -> None:
        """Stop this actor and its children."""
        self.stop()

    # -------------------------------------------------------------- dispatch

    def _before_control_message(self) -> None:
        # A Message turn ships held-back telemetry with its ReceivedMessage; a
        # proxy call or a stop has no such report, so it ships it first.
        if self._pending_telemetry:
            self._flush_telemetry()

    def on_receive(self, message: Any) -> Any:
        """Dispatch ``message``; Message turns are wrapped in telemetry and a checkpoint."""
        if not isinstance(message, Message):
            return self._dispatch(message, None)
        self._current_message = message
        if self._orchestrator is None:
            result = self._dispatch(message, message.sender)
        else:
            message_id = message.id
            me = self._my_address
            team_id = self.team_id
            self._deliver(_received(message_id, me, team_id, message_id))
            chain = self._chains.get(type(message)) if self._inline_dispatch else None
            if chain is not None and len(chain) == 1:
                # _dispatch for a message type with one handler, inlined.
                fn, wants_sender = chain[0]
                result = fn(self, message, message.sender) if wants_sender else fn(self, message)
                if result is SUPER:
                    result = None
            else:
                result = self._dispatch(message, message.sender)
            current = self._current_message
            processed = _processed(message_id, me, team_id, None if current is None else current.id)
            if self._inbox_deque:
                # Mail is waiting, so the next turn starts at once: hold the
                # ProcessedMessage back and ship it with that turn's ReceivedMessage.
                self._pending_telemetry.append(processed)
            else:
                self._deliver(processed)
        self.state.notify_if_changed()
        self._current_message = None
        return result

    def _dispatch(self, message: Any, sender: ActorAddress | None) -> Any:
        chain = self._chains.get(type(message))
        if chain is None:
            chain = self._chains[type(message)] = resolve_handlers(type(self), type(message))
        for fn, wants_sender in chain:
            result = fn(self, message, sender) if wants_sender else fn(self, message)
            if result is not SUPER:
                return result
        if not chain:
            logger.warning("Unknown message %s for %s", type(message).__name__, self.config.name)
        return None

    # ------------------------------------------------------------ telemetry

    def _emit(self, cls: type[Message], **fields: Any) -> None:
        if self._orchestrator is None:
            return
        current = self._current_message
        fields["sender"] = self._my_address
        fields["team_id"] = self.team_id
        fields["parent_id"] = None if current is None else current.id
        self._deliver(fast_construct(cls, fields))

    def _sink_of(self, orchestrator: ActorAddress) -> Callable[[Any], object]:
        # The poster is rebuilt only when the orchestrator changes (a restore).
        if orchestrator is not self._sink_target:
            self._sink = _poster(orchestrator)
            self._sink_target = orchestrator
        return self._sink

    def _deliver(self, message: Message) -> None:
        orchestrator = self._orchestrator
        if orchestrator is None:
            return
        pending = self._pending_telemetry
        sink = self._sink if orchestrator is self._sink_target else self._sink_of(orchestrator)
        if pending:
            pending.append(message)
            self._pending_telemetry = TelemetryBatch()
            sink(pending)
        else:
            sink(message)

    def _flush_telemetry(self) -> None:
        pending = self._pending_telemetry
        if not pending:
            return
        self._pending_telemetry = TelemetryBatch()
        orchestrator = self._orchestrator
        if orchestrator is None:
            return
        self._sink_of(orchestrator)(pending[0] if len(pending) == 1 else pending)

    def _notify_orchestrator(self, message: Message) -> None:
        if self._orchestrator is None:
            return
        message.init(self._my_address, self.team_id, self._current_message)
        self._deliver(message)

    def send(self, recipient: ActorAddress, message: M) -> M:
        """Stamp ``message``, report it, and deliver it to ``recipient``."""
        assert recipient is not None, "send() needs a recipient"
        if isinstance(message, Message):
            me = self._my_address
            team_id = self.team_id
            current = self._current_message
            if type(message).init is _MESSAGE_INIT and type(team_id) is UUID:
                # Message.init, inlined (team_id is already a UUID).
                values = message.__dict__
                values["parent_id"] = None if current is None else current.id
                values["team_id"] = team_id
                values["sender"] = me
            else:
                message.init(me, team_id, current)
            if self._orchestrator is not None:
                if self._inline_sent:
                    parent_id = None if current is None else current.id
                    self._deliver(_sent(message, recipient, me, team_id, parent_id))
                else:
                    self._emit(SentMessage, message=message, recipient=recipient)
        recipient.tell(message)
        return message

    def _on_turn_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # The actor survives a failed turn: checkpoint, report, carry on.
        self._checkpoint_guarded()
        failed = self._current_message
        is_warning = isinstance(exception_value, WarningError)
        if is_warning:
            logger.warning("%s: %s", self.config.name, exception_value)
        else:
            logger.error(
                "Unhandled exception in %s",
                self.config.name,
                exc_info=(exception_type, exception_value, traceback),  # type: ignore[arg-type]
            )
        name = exception_type.__name__ if exception_type is not None else "Exception"
        if is_warning:
            self._emit(
                WarningMessage,
                content_type=name,
                content=str(exception_value),
                current_message=failed,
            )
        else:
            text = "".join(tb_module.format_exception(exception_type, exception_value, traceback))
            self._emit(
                ErrorMessage,
                content_type=name,
                content=str(exception_value),
                current_message=failed,
                traceback=text,
            )
        # The turn closes after its report: a team that waits for idle (then stops) must
        # see the report first, or it lands in the log after the team's stop.
        if failed is not None:
            self._emit(ProcessedMessage, message_id=failed.id)
        self._current_message = None

    def _on_start_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Reported like a failed turn; the seam then stops the actor, so the
        # orchestrator is told it left (its StartMessage went out in __init__).
        self._on_turn_failure(exception_type, exception_value, traceback)
        self._notify_orchestrator(StopMessage())

    # ---------------------------------------------------------------- state

    def _checkpoint_guarded(self) -> None:
        try:
            self.state.notify_if_changed()
        except Exception:
            logger.warning("State checkpoint of %s failed", self.config.name, exc_info=True)

    def notify_state_change(self, state: BaseState) -> None:
        """Observer hook: publish a detached copy of ``state``."""
        self._notify_orchestrator(StateChangedMessage(state=state.serializable_copy()))

    def init_state(self, state: StateType) -> None:
        """Replace the state, keeping the current observer, and publish it."""
        observer = self.state.get_observer()
        self.state = state.observer(observer)

    def update_state(self, updates: dict[str, Any]) -> None:
        """Merge ``updates`` into the state; failures are reported, not raised."""
        try:
            merged = {**self.state.model_dump(), **updates}
            new_state = type(self.state).model_validate(
                merged, context=AkgentDeserializeContext(self)
            )
            self.init_state(new_state)
        except Exception as exc:
            logger.exception("update_state failed for %s", self.config.name)
            self._notify_orchestrator(
                ErrorMessage(
                    content_type=type(exc).__name__,
                    content=str(exc),
                    current_message=self._current_message,
                    traceback=tb_module.format_exc(),
                )
            )

    def notify_event(self, event: object) -> None:
        """Publish a domain event to the orchestrator."""
        self._notify_orchestrator(EventMessage(event=event))

    def init_llm_context(self, events: list[EventMessage]) -> None:
        """Hook for restoring LLM history on restore; no-op here."""

    # ------------------------------------------------------------- children

    def createActor(
        self,
        actor_class: type[Akgent[Any, Any]],
        agent_id: UUID | str | None = None,
        config: BaseConfig | None = None,
        **kwargs: Any,
    ) -> ActorAddress:
        """Start a child actor in this actor's team, reporting to the same orchestrator."""
        if config is None:
            config = BaseConfig()
        if config.squad_id is None:
            config.squad_id = self.config.squad_id
        ref = actor_class.start(
            agent_id=agent_id,
            team_id=self.team_id,
            config=config,
            user_id=self._user_id,
            user_email=self._user_email,
            parent=self._my_address,
            orchestrator=self._orchestrator,
            **kwargs,
        )
        address = address_of(ref)
        self._children.append(address)
        return address

    # --------------------------------------------------------------- mailbox

    def get_mailbox(self) -> list[Message]:
        """Messages waiting in this actor's inbox (not removed)."""
        return peek_messages(self.actor_inbox)

    def consume_mailbox(self, ids: list[UUID] | list[str]) -> list[Message]:
        """Absorb queued messages by id into the current run (actor thread only).

        Each absorbed message is closed in the ledger with a HandledMessage.
        """
        if self._thread_ident != threading.get_ident():
            raise RuntimeError("consume_mailbox() must run on the actor's own thread")
        taken = take_messages(self.actor_inbox, ids)
        if self._orchestrator is not None:
            current = self._current_message
            parent_id = None if current is None else current.id
            for message in taken:
                self._deliver(_handled(message.id, self._my_address, self.team_id, parent_id))
        return taken
