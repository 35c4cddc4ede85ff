"""ActorSystem: create root actors, talk to actors from plain code, shut down."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any, TypeVar
from uuid import UUID, uuid4

import pykka
from pydantic import BaseModel, ConfigDict

from akgentic.core._pykka_seam import actor_of
from akgentic.core.actor_address import ActorAddress
from akgentic.core.actor_address_impl import ActorAddressImpl, address_of
from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages.message import Message
from akgentic.core.proxy import ProxyFactory, ProxyWrapper, interrupt_actor
from akgentic.core.utils.serializer import import_class

__all__ = ["ActorSystem", "ActorSystemListener", "ExecutionContext", "Statistics"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SHUTDOWN_MARGIN = 5.0


class ActorSystemListener(pykka.ThreadingActor):
    """Hidden actor that stands for plain code: replies to it can be ``listen()``-ed."""

    def __init__(self) -> None:
        super().__init__()
        self.agent_id = uuid4()
        self.team_id = uuid4()
        self.config = BaseConfig(name="@ActorSystem", role="ActorSystem")
        self.inbox: queue.Queue[Any] = queue.Queue()
        self._my_address = ActorAddressImpl(self.actor_ref)

    def on_receive(self, message: Any) -> Any:
        self.inbox.put(message)
        return None


class Statistics(BaseModel):
    """Counts of live actors."""

    model_config = ConfigDict(defer_build=True)

    orchestrator_count: int
    agent_count: int


class ExecutionContext:
    """A sender identity for code running outside any actor."""

    def __init__(self) -> None:
        ref = ActorSystemListener.start()
        self._listener_ref = ref
        self._listener_address = address_of(ref)
        listener = actor_of(ref)
        assert listener is not None
        self._inbox: queue.Queue[Any] = listener.inbox

    @property
    def myAddress(self) -> ActorAddress:
        """Address of this context's listener (serializes as ``@ActorSystem``)."""
        return self._listener_address

    def _stamp(self, actor: ActorAddress, message: Any) -> None:
        if isinstance(message, Message):
            values = message.__dict__
            values["sender"] = self._listener_address
            values["team_id"] = actor.team_id

    def tell(self, actor: ActorAddress, message: Any) -> None:
        """Deliver ``message`` to ``actor`` with this context as the sender."""
        if isinstance(message, Message):  # _stamp, inlined: this is the sender's hot path
            values = message.__dict__
            values["sender"] = self._listener_address
            values["team_id"] = actor.team_id
        actor.tell(message)

    def ask(self, actor: ActorAddress, message: Any, timeout: float | None = None) -> Any:
        """Deliver ``message`` and return the handler's result."""
        self._stamp(actor, message)
        return actor.ask(message, timeout=timeout)

    def listen(self, timeout: float | None = None) -> Any:
        """Next message an actor sent to this context; TimeoutError after ``timeout``."""
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message within {timeout} s") from None

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop the listener."""
        with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):
            self._listener_ref.stop(block=True, timeout=timeout)


class ActorSystem(ExecutionContext, ProxyFactory):
    """Entry point of the runtime: creates root actors and shuts everything down."""

    def createActor(
        self,
        actor_class: type[Akgent[Any, Any]] | str,
        restoring: bool = False,
        agent_id: UUID | str | None = None,
        user_id: str | None = None,
        user_email: str | None = None,
        team_id: UUID | str | None = None,
        config: BaseConfig | None = None,
    ) -> ActorAddress:
        """Start a root actor (no parent, no orchestrator unless it is one)."""
        cls = import_class(actor_class) if isinstance(actor_class, str) else actor_class
        if config is None:
            config = BaseConfig()
        if config.squad_id is None:
            config.squad_id = uuid4()
        ref = cls.start(
            agent_id=agent_id,
            team_id=team_id,
            config=config,
            user_id=user_id,
            user_email=user_email,
            restoring=restoring,
        )
        return address_of(ref)

    @contextlib.contextmanager
    def private(self) -> Iterator[ExecutionContext]:
        """A temporary context with its own listener, shut down on exit."""
        context = ExecutionContext()
        try:
            yield context
        finally:
            context.shutdown()

    def get_actor(self, address: ActorAddress) -> ActorAddress | None:
        """Live address of the actor with ``address.agent_id``, if it runs."""
        for ref in pykka.ActorRegistry.get_all():
            actor = actor_of(ref)
            if actor is not None and getattr(actor, "agent_id", None) == address.agent_id:
                return address_of(ref)
        return None

    @property
    def orchestrators(self) -> list[ActorAddress]:
        """Addresses of the running orchestrators."""
        from akgentic.core.orchestrator import Orchestrator

        return [
            address_of(ref)
            for ref in pykka.ActorRegistry.get_by_class(Orchestrator)
            if actor_of(ref) is not None
        ]

    def stat(self) -> list[Statistics]:
        """Number of orchestrators and of other live actors."""
        refs = pykka.ActorRegistry.get_all()
        orchestrators = len(self.orchestrators)
        return [Statistics(orchestrator_count=orchestrators, agent_count=len(refs) - orchestrators)]

    def shutdown(self, timeout: float | None = 120) -> None:
        """Stop every team, then every actor left, so the process can exit."""
        super().shutdown(timeout)
        grace = 30.0 if timeout is None else float(timeout)
        events: list[threading.Event] = []
        for address in self.orchestrators:
            try:
                events.append(ProxyWrapper(address, timeout=grace).stop(grace))
            except (pykka.ActorDeadError, pykka.Timeout):
                continue
            except Exception:
                logger.warning("Stopping orchestrator %r failed", address, exc_info=True)
        for event in events:
            # The orchestrator's own backstop bounds this; the margin only guards a wedged thread.
            event.wait(grace + _SHUTDOWN_MARGIN)
        leftovers = pykka.ActorRegistry.get_all()
        if leftovers:
            names = sorted({ref.actor_class.__name__ for ref in leftovers})
            logger.warning("Force-stopping %d actors still running: %s", len(leftovers), names)
        for ref in leftovers:
            interrupt_actor(ref)
            with contextlib.suppress(Exception):
                ref.stop(block=False)
        for ref in leftovers:
            ref.actor_stopped.wait(_SHUTDOWN_MARGIN)
