"""Typed method-call proxies on actors, without pykka's proxy introspection.

``ProxyWrapper(address, ask=True)`` turns ``wrapper.method(*args)`` into a
pykka ``ProxyCall`` on the actor's thread and waits for the result;
``ask=False`` fires the call and returns ``None``. Reading a non-method
attribute returns its value (ask) or a future (tell). Results are already
resolved: never call ``.get()`` on them.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar, overload

import pykka
from pykka.messages import ProxyCall, ProxyGetAttr

from akgentic.core._pykka_seam import actor_of
from akgentic.core.actor_address import ActorAddress

__all__ = ["ProxyWrapper", "actor_ref_of", "interrupt_actor", "offer_cancel"]

logger = logging.getLogger(__name__)

_kinds: dict[tuple[type, str], bool] = {}


def _is_method(cls: type, name: str) -> bool:
    key = (cls, name)
    kind = _kinds.get(key)
    if kind is None:
        attr = inspect.getattr_static(cls, name, None)
        kind = _kinds[key] = inspect.isroutine(attr) or isinstance(attr, staticmethod | classmethod)
    return kind


def actor_ref_of(address: ActorAddress) -> pykka.ActorRef[Any]:
    """The pykka reference behind a live address (RuntimeError for snapshots)."""
    ref = getattr(address, "actor_ref", None)
    if ref is None:
        raise RuntimeError(f"{address!r} is a snapshot address; resolve it to a live address first")
    return ref  # type: ignore[no-any-return]


def interrupt_actor(target: ActorAddress | pykka.ActorRef[Any]) -> None:
    """Ask the actor behind ``target`` to end its work in flight, before a stop is queued.

    Runs on the caller's thread: the actor's own thread may be busy for as long as
    its work lasts (a model request that never answers), so a stop queued in its
    inbox alone would wait behind it. Actors without an ``interrupt`` method, and
    snapshot addresses, are left alone.
    """
    _call_hook(target, "interrupt")


def offer_cancel(target: ActorAddress | pykka.ActorRef[Any], message: Any) -> None:
    """Tell the actor behind ``target`` that ``message``, just queued for it, may cancel its run.

    Like :func:`interrupt_actor`, on the caller's thread, so a ``/stop`` does not wait
    in the inbox behind the run it means to end. The actor's ``cancel_requested``
    decides (who sent it, whether a run is in flight); the message stays queued.
    """
    _call_hook(target, "cancel_requested", message)


def _call_hook(target: ActorAddress | pykka.ActorRef[Any], name: str, *args: Any) -> None:
    ref = target if isinstance(target, pykka.ActorRef) else getattr(target, "actor_ref", None)
    if ref is None:
        return
    hook = getattr(actor_of(ref), name, None)
    if not callable(hook):
        return
    try:
        hook(*args)
    except Exception:
        logger.warning("%s on %r failed", name, ref, exc_info=True)


class ProxyWrapper:
    """Call methods of an actor through its mailbox (see module docstring)."""

    __slots__ = ("_ask", "_cls", "_ref", "_timeout")

    def __init__(self, address: ActorAddress, ask: bool = True, timeout: float | None = None):
        ref = actor_ref_of(address)
        self._ref = ref
        self._cls: type = ref.actor_class
        self._ask = ask
        self._timeout = timeout

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        ref = self._ref
        if _is_method(self._cls, name):
            path = (name,)
            if self._ask:
                timeout = self._timeout

                def ask_call(*args: Any, **kwargs: Any) -> Any:
                    return ref.ask(
                        ProxyCall(attr_path=path, args=args, kwargs=kwargs), timeout=timeout
                    )

                return ask_call

            def tell_call(*args: Any, **kwargs: Any) -> None:
                ref.tell(ProxyCall(attr_path=path, args=args, kwargs=kwargs))

            call: Callable[..., Any] = tell_call
            return call
        if self._ask:
            return ref.ask(ProxyGetAttr(attr_path=(name,)), timeout=self._timeout)
        return ref.ask(ProxyGetAttr(attr_path=(name,)), block=False)

    def __repr__(self) -> str:
        mode = "ask" if self._ask else "tell"
        return f"<ProxyWrapper {mode} {self._ref}>"


T = TypeVar("T")


class ProxyFactory:
    """``proxy_ask`` / ``proxy_tell``, shared by actors and the actor system."""

    @overload
    def proxy_ask(
        self, actor: ActorAddress, actor_type: type[T], timeout: float | None = None
    ) -> T: ...
    @overload
    def proxy_ask(
        self, actor: ActorAddress, actor_type: None = None, timeout: float | None = None
    ) -> Any: ...
    def proxy_ask(
        self, actor: ActorAddress, actor_type: type[Any] | None = None, timeout: float | None = None
    ) -> Any:
        """Blocking proxy on ``actor``: method calls return their result.

        ``actor_type`` is for typing only.
        """
        return ProxyWrapper(actor, ask=True, timeout=timeout)

    @overload
    def proxy_tell(self, actor: ActorAddress, actor_type: type[T]) -> T: ...
    @overload
    def proxy_tell(self, actor: ActorAddress, actor_type: None = None) -> Any: ...
    def proxy_tell(self, actor: ActorAddress, actor_type: type[Any] | None = None) -> Any:
        """Fire-and-forget proxy on ``actor``: method calls return None at once."""
        return ProxyWrapper(actor, ask=False)
