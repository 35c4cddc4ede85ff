"""The one place where akgentic touches pykka's private API.

pykka's public API is too slow for the hot path of a team (a few Python calls
too many per message), so the kernel relies on a handful of pykka internals:

* ``pykka._envelope.Envelope``, built directly to put mail into an inbox;
* ``ActorRef._actor_weakref``, to reach the actor object behind a reference;
* the actor loop's private methods ``_actor_loop``, ``_actor_loop_setup``,
  ``_actor_loop_running``, ``_handle_receive``, ``_handle_failure``, ``_stop``
  and ``_create_actor_inbox``, overridden by :class:`SeamActor`;
* the ``ProxyCall`` branch of ``_handle_receive`` (``get_attr_directly``, then
  the call), inlined in the receive loop, and the ``ProxyCall`` tuple built by
  :func:`call_teller` without its constructor.

Nothing else in akgentic may use them. ``tests/core/test_pykka_seam.py`` pins
:data:`PYKKA_VERSION` and checks the shape of each of these internals, so a
pykka upgrade fails there, loudly, before anything subtler breaks.

Behaviour :class:`SeamActor` keeps from pykka, and what it changes:

* an exception raised by ``on_start`` stops the actor, as in pykka: the error
  is reported through :meth:`SeamActor._on_start_failure`, the actor leaves the
  registry, and asks waiting in its inbox fail with ``ActorDeadError``;
* an exception raised by a turn (a message without a reply future) does *not*
  stop the actor: it is reported through :meth:`SeamActor._on_turn_failure`
  and the actor goes on with its next message (pykka would stop it);
* an exception in a turn with a reply future goes back to the asking caller,
  and a ``BaseException`` stops every actor, both as in pykka;
* an actor whose inbox stays empty for :attr:`SeamActor.linger` seconds gives
  its thread up (it *parks*; see :class:`~akgentic.core.mailbox.Inbox`): it
  stays started and registered, and the next envelope put into its inbox
  starts a new thread that carries on with the same actor, the same inbox and
  no second ``on_start``. One thread at a time runs an actor, as in pykka, so
  a ThreadingActor's isolation is unchanged; an idle actor just costs no
  thread. :data:`LINGER_ENV_VAR` sets the default (``off`` never parks).
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, ClassVar

import pykka
from pykka import ActorRegistry
from pykka._envelope import Envelope
from pykka.messages import ProxyCall

from akgentic.core.mailbox import Inbox

__all__ = [
    "DEFAULT_LINGER",
    "LINGER_ENV_VAR",
    "PYKKA_VERSION",
    "Envelope",
    "SeamActor",
    "actor_of",
    "call_teller",
    "is_running",
    "live_poster",
    "send_envelope",
    "teller",
    "thread_of",
]

#: The pykka release the internals above were checked against (see the canary test).
PYKKA_VERSION = "4.5.0"

_pykka_logger = logging.getLogger("pykka")

#: Seconds an actor with an empty inbox keeps its thread before it parks. Short on
#: purpose: every lingering thread is one more for the kernel and the GIL to juggle,
#: and with thousands of live teams that, not the thread starts, is the cost (a
#: 5,000-team held run: 7.3 ms of CPU per round trip at 2 s, 1.5 ms at 0.25 s).
DEFAULT_LINGER = 0.25
#: Environment variable overriding :data:`DEFAULT_LINGER` (seconds, or ``off``).
LINGER_ENV_VAR = "AKGENTIC_ACTOR_LINGER"

_thread_numbers = itertools.count()


def _linger_from_env() -> float | None:
    raw = os.environ.get(LINGER_ENV_VAR, "").strip().lower()
    if not raw:
        return DEFAULT_LINGER
    if raw in ("off", "none", "never"):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(
            f"{LINGER_ENV_VAR}={raw!r} is not a number of seconds (for example 2) nor 'off'"
        ) from None
    if value <= 0:
        raise ValueError(f"{LINGER_ENV_VAR} must be a positive number of seconds or 'off'")
    return value


ExcInfo = tuple[type[BaseException] | None, BaseException | None, TracebackType | None]


def actor_of(ref: pykka.ActorRef[Any]) -> Any:
    """The actor object behind ``ref``, or ``None`` once it was garbage-collected."""
    return ref._actor_weakref()


def is_running(ref: pykka.ActorRef[Any]) -> bool:
    """True while the actor behind ``ref`` runs and still exists."""
    return not ref.actor_stopped.is_set() and ref._actor_weakref() is not None


def thread_of(ref: pykka.ActorRef[Any]) -> int | None:
    """The thread ident of the :class:`SeamActor` behind ``ref`` (None before it runs)."""
    actor = ref._actor_weakref()
    return getattr(actor, "_thread_ident", None)


def send_envelope(ref: pykka.ActorRef[Any], bare: type | None = None) -> Callable[[Any], None]:
    """A function putting a message into ``ref``'s inbox as a fire-and-forget envelope.

    A message of exactly type ``bare`` is its own envelope (it has ``message``
    and ``reply_to``) and goes in unwrapped. The function does not check that
    the actor runs: callers check first (mail to a stopped actor is never read).
    """
    inbox = ref.actor_inbox
    if type(inbox) is Inbox:
        append, wake = inbox.producer()

        def post(message: Any) -> None:
            append(message if type(message) is bare else Envelope(message))
            wake(None)

        return post
    put: Callable[[Any], None] = inbox.put

    def put_envelope(message: Any) -> None:
        put(message if type(message) is bare else Envelope(message))

    return put_envelope


def live_poster(ref: pykka.ActorRef[Any], bare: type | None = None) -> Callable[[Any], bool]:
    """Like :func:`send_envelope`, checking first that the actor runs and still exists.

    The function returns ``False`` (and posts nothing) once the actor stopped or
    was garbage-collected, else ``True``: the check of ``ActorAddressImpl.tell``
    and the telemetry posters, fused with the delivery into one call.
    """
    is_stopped = ref.actor_stopped.is_set
    actor = ref._actor_weakref
    inbox = ref.actor_inbox
    if type(inbox) is Inbox:
        append, wake = inbox.producer()

        def post(message: Any) -> bool:
            if is_stopped() or actor() is None:
                return False
            append(message if type(message) is bare else Envelope(message))
            wake(None)
            return True

        return post
    put = send_envelope(ref, bare)

    def put_live(message: Any) -> bool:
        if is_stopped() or actor() is None:
            return False
        put(message)
        return True

    return put_live


def teller(ref: pykka.ActorRef[Any]) -> Callable[[Any], None]:
    """``ref.tell``: the same liveness check and envelope, without its call chain.

    Raises ``ActorDeadError`` once the actor stopped, as ``ActorRef.tell`` does.
    """
    is_stopped = ref.actor_stopped.is_set
    post = send_envelope(ref)

    def tell(message: Any) -> None:
        if is_stopped():
            raise pykka.ActorDeadError(f"{ref} not found")
        post(message)

    return tell


def call_teller(ref: pykka.ActorRef[Any], name: str) -> Callable[..., None]:
    """``f(*args)`` telling ``ref`` to call its method ``name`` with ``args``.

    What a fire-and-forget proxy call does (``ref.tell(ProxyCall(...))``, as
    ``ProxyWrapper(address, ask=False).name(*args)``), for a sender that makes
    the same call over and over: the envelope goes straight into the inbox.
    """
    path = (name,)
    new_tuple = tuple.__new__  # ProxyCall(path, args, {}) without its __new__ frame
    inbox = ref.actor_inbox
    if type(inbox) is not Inbox:
        tell = teller(ref)

        def call_generic(*args: Any) -> None:
            tell(new_tuple(ProxyCall, (path, args, {})))

        return call_generic
    is_stopped = ref.actor_stopped.is_set
    append, wake = inbox.producer()

    def call(*args: Any) -> None:
        if is_stopped():
            raise pykka.ActorDeadError(f"{ref} not found")
        append(Envelope(new_tuple(ProxyCall, (path, args, {}))))
        wake(None)

    return call


class SeamActor(pykka.ThreadingActor):
    """A threading actor with akgentic's inbox, receive loop and failure policy.

    Subclasses provide the hooks: :attr:`_turn_types` (messages that skip
    pykka's checks for its own control messages and go straight to
    ``on_receive``), :meth:`_before_control_message`, :meth:`_on_turn_failure`
    and :meth:`_on_start_failure`.
    """

    #: Message classes handled by ``on_receive`` without pykka's control checks.
    _turn_types: ClassVar[tuple[type, ...]] = ()
    _thread_ident: int | None = None
    #: Idle seconds before the actor gives its thread up (None: it keeps it).
    linger: ClassVar[float | None] = _linger_from_env()

    @classmethod
    def _create_actor_inbox(cls) -> Any:
        return Inbox(elastic=cls.linger is not None)

    def _start_actor_loop(self) -> None:
        inbox = self.actor_inbox
        if isinstance(inbox, Inbox) and inbox.elastic:
            inbox.attach_restart(self._start_resumed_loop)
        self._start_thread(self._actor_loop)

    def _start_thread(self, target: Callable[[], None]) -> None:
        thread = threading.Thread(
            target=target, name=f"{type(self).__name__}-{next(_thread_numbers)}"
        )
        thread.daemon = self.use_daemon_thread
        thread.start()

    def _start_resumed_loop(self) -> None:
        """Mail came for a parked actor: a new thread carries on with it."""
        self._start_thread(self._resumed_loop)

    # -- hooks ------------------------------------------------------------
    def _before_control_message(self) -> None:
        """Runs before a pykka control message (a proxy call, a stop) is handled."""

    def _on_turn_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """A turn raised; the actor survives it. Logs the error by default."""
        _pykka_logger.error(
            "Unhandled exception in %s:",
            self,
            exc_info=(exception_type, exception_value, traceback),  # type: ignore[arg-type]
        )

    def _on_start_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """``on_start`` raised; the actor stops right after this returns."""
        self._on_turn_failure(exception_type, exception_value, traceback)

    # -- pykka overrides --------------------------------------------------
    def _actor_loop(self) -> None:
        # Remembered so that a live address used from this very thread calls
        # directly instead of asking itself (which would deadlock).
        self._thread_ident = threading.get_ident()
        self._actor_loop_setup()
        if self._receive():
            return  # parked: the actor lives on without a thread
        self._actor_loop_teardown()
        self._release_inbox()

    def _resumed_loop(self) -> None:
        self._thread_ident = threading.get_ident()
        if self._receive():
            return
        self._actor_loop_teardown()
        self._release_inbox()

    def _release_inbox(self) -> None:
        inbox = self.actor_inbox
        if isinstance(inbox, Inbox) and inbox.elastic:
            inbox.detach_restart()

    def _actor_loop_setup(self) -> None:
        try:
            self.on_start()
        except Exception:
            info = sys.exc_info()
            try:
                self._on_start_failure(*info)
            except Exception:
                _pykka_logger.exception("Reporting the failed start of %s failed", self)
            # pykka's own policy for a failed start (its _handle_failure minus a
            # second log of the error): leave the registry and stop.
            ActorRegistry.unregister(self.actor_ref)
            self.actor_stopped.set()

    def _handle_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # pykka's "log, unregister and stop" becomes "report and carry on".
        self._on_turn_failure(exception_type, exception_value, traceback)

    def _handle_receive(self, message: Any) -> Any:
        if isinstance(message, self._turn_types):
            return self.on_receive(message)
        self._before_control_message()
        return super()._handle_receive(message)

    def _actor_loop_running(self) -> None:
        self._receive()

    def _receive(self) -> bool:
        """Handle mail until the actor stops (False) or parks (True)."""
        # pykka's receive loop with the per-envelope lookups hoisted and the
        # inbox read inlined; the error handling is pykka's, unchanged.
        inbox = self.actor_inbox
        if not isinstance(inbox, Inbox):
            super()._actor_loop_running()
            return False
        is_stopped = self.actor_stopped.is_set
        wait, items = inbox.consumer()
        linger = self.linger if inbox.elastic else None
        if linger is not None:
            get = inbox._tokens.get
            park = inbox.park

            def wait() -> None:
                while True:
                    try:
                        get(True, linger)
                        return
                    except queue.Empty:
                        # Forget this thread before parking: the next thread to get
                        # its ident (idents are reused) must not pass for the actor's,
                        # and a producer may restart the actor the moment it parked.
                        ident = self._thread_ident
                        self._thread_ident = None
                        if park():
                            raise _ParkedSignal from None
                        self._thread_ident = ident

        take = items.popleft
        handle = self._handle_receive
        turn_types = self._turn_types
        # _handle_receive's turn and method-call branches, inlined unless a
        # subclass overrides it.
        inline = type(self)._handle_receive is SeamActor._handle_receive
        turn = self.on_receive if inline else None
        before_call = self._before_control_message
        while not is_stopped():
            try:
                wait()
            except _ParkedSignal:
                return True
            if not items:  # more wake-ups than envelopes once mail was absorbed
                continue
            envelope = take()
            try:
                message = envelope.message
                if turn is not None and isinstance(message, turn_types):
                    response = turn(message)
                elif turn is not None and type(message) is ProxyCall:
                    # pykka's ProxyCall branch (get_attr_directly, then the call).
                    before_call()
                    callee: Any = self
                    for name in message.attr_path:
                        callee = getattr(callee, name)
                    response = callee(*message.args, **message.kwargs)
                else:
                    response = handle(message)
                if envelope.reply_to is not None:
                    envelope.reply_to.set(response)
            except Exception:
                if envelope.reply_to is not None:
                    _pykka_logger.info(
                        "Exception returned from %s to caller:", self, exc_info=sys.exc_info()
                    )
                    envelope.reply_to.set_exception()
                else:
                    self._handle_failure(*sys.exc_info())
                    try:
                        self.on_failure(*sys.exc_info())
                    except Exception:
                        self._handle_failure(*sys.exc_info())
            except BaseException:
                _pykka_logger.debug("%r in %s. Stopping all actors.", sys.exc_info()[1], self)
                self._stop()
                ActorRegistry.stop_all()
        return False


class _ParkedSignal(Exception):  # noqa: N818 - a signal, not an error
    """Raised out of an elastic actor's wait once it parked (never escapes the loop)."""
