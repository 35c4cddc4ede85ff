"""Deferred results: slow work off a tool actor's thread, with a bounded caller poll.

A tool actor is one thread serving a whole team; a slow call inside one of its methods
queues every caller behind it. The pattern here keeps that thread free:

- a **cache actor** (:class:`DeferredResultActor`) answers ``get(key)`` from a dict and,
  on ``request(key, payload)``, starts a worker; it never does the slow work itself;
- a **worker** (:class:`DeferredWorker`) per key does the one slow call, reports to its
  parent with ``deliver`` or ``fail``, and stops itself;
- the **caller** polls ``get`` a bounded number of times (:func:`poll_deferred`) and
  always has a degraded answer ready when the value is not there in time.

The seven rules this module implements: the cache actor never performs the slow call;
one short-lived self-stopping worker per key; worker names start with ``#`` (the
orchestrator stops ``#`` actors last and in parallel, so a busy worker does not hold up
regular members' teardown); three requests for one key make one external call
(in-flight de-duplication); failures are cached negatively with a TTL instead of being
retried on every poll; the cache is an LRU with a fixed capacity; and callers poll with
a bounded budget. Workers bound their external call with :attr:`DeferredWorker.timeout`,
which is below the orchestrator's stop backstop.

Not re-exported by :mod:`akgentic.tool.core`; import this module directly.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.orchestrator import STOP_TIMEOUT

__all__ = [
    "CACHE_CAPACITY",
    "NEGATIVE_TTL",
    "TOOL_ACTOR_ROLE",
    "WORKER_PREFIX",
    "WORKER_TIMEOUT",
    "DeferredPayload",
    "DeferredResultActor",
    "DeferredWorker",
    "poll_deferred",
]

logger = logging.getLogger(__name__)

CACHE_CAPACITY = 128
"""Entries a cache actor keeps (failures included) before evicting the least recent."""

NEGATIVE_TTL = 60.0
"""Seconds a failure is remembered; the key may be requested again afterwards."""

WORKER_TIMEOUT = 20.0
"""Budget in seconds of one worker's external call; below the stop backstop."""

WORKER_PREFIX = "#defer-"
"""Worker actor names start with this (``#``: a tool actor for the teardown)."""

TOOL_ACTOR_ROLE = "ToolActor"
"""Role of cache actors and workers; team restoration starts these first."""

ConfigT = TypeVar("ConfigT", bound=BaseConfig)
StateT = TypeVar("StateT", bound=BaseState)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
PayloadT = TypeVar("PayloadT")
T = TypeVar("T")


@dataclass(frozen=True)
class DeferredPayload(Generic[K, PayloadT]):
    """What a cache actor tells a fresh worker: the key and the input of the slow call.

    A plain object, not a persisted message: it stays in memory and may hold anything.
    """

    key: K
    payload: PayloadT


@dataclass(frozen=True)
class _Failure:
    error: str
    expires_at: float


class DeferredWorker(Akgent[BaseConfig, BaseState], Generic[PayloadT, V]):
    """Performs one slow call for one key, reports it to its parent, then stops.

    Subclass it and implement :meth:`produce`; pass :attr:`timeout` on to the client
    doing the I/O (a Python thread cannot be interrupted, so a timeout that does not
    reach the client bounds nothing). The worker never holds state between calls: it
    is started for one payload and gone after it.
    """

    timeout: ClassVar[float] = WORKER_TIMEOUT
    """Budget of the external call, in seconds; must stay below ``STOP_TIMEOUT``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not 0 < cls.timeout < STOP_TIMEOUT:
            raise TypeError(
                f"{cls.__name__}.timeout is {cls.timeout}s; it must be positive and below the "
                f"orchestrator's stop backstop ({STOP_TIMEOUT}s), or a busy worker would "
                "hold its team's teardown until the backstop fires"
            )

    @abstractmethod
    def produce(self, payload: PayloadT) -> V:
        """Do the slow call and return its value (raise on failure).

        Use ``self.timeout`` as the client's timeout.
        """

    def receiveMsg_DeferredPayload(self, message: DeferredPayload[Any, PayloadT]) -> None:
        """Produce, report to the parent (a tell: the parent may be stopping), stop."""
        parent = self.parent
        try:
            value = self.produce(message.payload)
        except Exception as error:
            logger.info("deferred worker %s failed: %s", self.config.name, error)
            outcome: tuple[str, Any] = ("fail", f"{type(error).__name__}: {error}")
        else:
            if value is None:
                outcome = ("fail", "the worker produced no value")
            else:
                outcome = ("deliver", value)
        try:
            if parent is not None:
                method, argument = outcome
                getattr(self.proxy_tell(parent), method)(message.key, argument)
        finally:
            self.stop()


class DeferredResultActor(Akgent[ConfigT, StateT], Generic[ConfigT, StateT, K, V]):
    """A cache actor: answers from memory, delegates production to short-lived workers.

    Type parameters: the actor's config and state types, the hashable key ``K`` and the
    produced value ``V``. Subclasses implement :meth:`worker_class`. Every method is
    O(1) work on the actor's thread, so callers may use an ask proxy for all of them.

    Class attributes tune the policy (:attr:`capacity`, :attr:`negative_ttl`); time is
    read through :meth:`now`, which tests override with a controllable clock.
    """

    capacity: ClassVar[int] = CACHE_CAPACITY
    negative_ttl: ClassVar[float] = NEGATIVE_TTL

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._entries: OrderedDict[K, V | _Failure] = OrderedDict()
        self._in_flight: dict[K, float] = {}

    @abstractmethod
    def worker_class(self) -> type[DeferredWorker[Any, V]]:
        """The worker class started for each requested key."""

    def now(self) -> float:
        """Monotonic time in seconds, for failure expiry and stale in-flight marks."""
        return time.monotonic()

    # ------------------------------------------------------------ callers

    def get(self, key: K) -> V | None:
        """The cached value of ``key``, or None (pending, failed or never requested)."""
        entry = self._lookup(key)
        return None if entry is None or isinstance(entry, _Failure) else entry

    def failure(self, key: K) -> str | None:
        """The error of a failed ``key`` while its negative entry lasts, else None."""
        entry = self._lookup(key)
        return entry.error if isinstance(entry, _Failure) else None

    def request(self, key: K, payload: object) -> ActorAddress | None:
        """Start a worker for ``key`` unless one is running or the key is cached.

        Returns the new worker's address, or None when nothing was started: the value
        (or a still-valid failure) is cached, or a worker for the key is in flight.
        """
        if self._lookup(key) is not None:
            return None
        now = self.now()
        started = self._in_flight.get(key)
        if started is not None:
            if now - started <= self.worker_class().timeout + 1.0:
                return None
            # The worker should have reported by now; it is gone or wedged. Forget it
            # rather than leave the key blocked for the life of the team.
            logger.warning("deferred worker for %r never reported; requesting again", key)
        name = f"{WORKER_PREFIX}{key}"
        address = self.createActor(
            self.worker_class(), config=BaseConfig(name=name, role=TOOL_ACTOR_ROLE)
        )
        self._in_flight[key] = now
        address.tell(DeferredPayload(key=key, payload=payload))
        return address

    # ------------------------------------------------------------ workers

    def deliver(self, key: K, value: V) -> None:
        """Store a produced value (called by the worker)."""
        self._in_flight.pop(key, None)
        self._store(key, value)

    def fail(self, key: K, error: str) -> None:
        """Remember a failure for :attr:`negative_ttl` seconds (called by the worker)."""
        self._in_flight.pop(key, None)
        self._store(key, _Failure(error=error, expires_at=self.now() + self.negative_ttl))

    # -------------------------------------------------------- diagnostics

    def in_flight(self) -> list[K]:
        """Keys whose worker has not reported yet."""
        return list(self._in_flight)

    def cached_keys(self) -> list[K]:
        """Cached keys (failures included), least recently used first."""
        return list(self._entries)

    # ----------------------------------------------------------- internal

    def _lookup(self, key: K) -> V | _Failure | None:
        if key not in self._entries:
            return None
        entry = self._entries[key]
        if isinstance(entry, _Failure) and entry.expires_at <= self.now():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry

    def _store(self, key: K, entry: V | _Failure) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)


def poll_deferred(
    fetch: Callable[[], T | None],
    attempts: int = 5,
    delay: float = 0.4,
    *,
    wait: Callable[[float], object] | None = None,
) -> T | None:
    """Call ``fetch`` up to ``attempts`` times, waiting ``delay`` seconds before each.

    Returns the first value that is not None, or None when the budget is spent: the
    caller then answers with its degraded result. The total wait is bounded by
    ``attempts * delay``; never replace this with an unbounded ask.

    ``wait`` replaces the pause between attempts (default: an uninterruptible
    ``threading.Event().wait``), for callers that have their own stop signal.
    """
    pause = wait if wait is not None else threading.Event().wait
    for _ in range(max(0, attempts)):
        pause(delay)
        value = fetch()
        if value is not None:
            return value
    return None
