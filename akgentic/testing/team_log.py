"""A team's log written by hand, message by message, for tests and benchmarks of its views.

:class:`TeamLog` makes the messages a real run records (starts, hires, messages
between members, turns, tool calls, model usage, stops) with addresses of one
team and timestamps on a clock it advances, so a view computed from a log (the
console's pictures, a trace) can be checked on an exact history without running
a team. :meth:`TeamLog.stored` gives them as the store holds them.

    log = TeamLog()
    human = log.member("@Human", human=True)
    manager = log.member("@Manager")
    asked = log.send(human, manager, "hello")
    log.received(manager, asked)
    log.usage(manager, 120, 30, usd=0.001)
    log.processed(manager, asked)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid4

if TYPE_CHECKING:
    from akgentic.agent.output_models import Intent
    from akgentic.core.actor_address import ActorAddress
    from akgentic.core.messages.message import Message
    from akgentic.team.models import PersistedEvent

__all__ = ["TeamLog"]


class TeamLog:
    """Builds one team's log in memory; every message advances the clock by ``step``."""

    def __init__(
        self,
        team_id: UUID | None = None,
        *,
        start: datetime | None = None,
        step: timedelta = timedelta(milliseconds=10),
    ) -> None:
        self.team_id = team_id or uuid4()
        self.messages: list[Message] = []
        self.clock = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.step = step
        self.orchestrator = self.address("@Orchestrator", "Orchestrator")
        self._start(self.orchestrator, None)

    # -- addresses and stamping -------------------------------------------------------
    def address(self, name: str, role: str, *, human: bool = False) -> ActorAddress:
        """A new actor's address in this team (not started: see :meth:`member`)."""
        from akgentic.core.actor_address import ActorAddressProxy

        return ActorAddressProxy(
            {
                "__actor_address__": True,
                "__actor_type__": "akgentic.agent.HumanProxy"
                if human
                else "akgentic.agent.BaseAgent",
                "agent_id": str(uuid4()),
                "name": name,
                "role": role,
                "team_id": str(self.team_id),
                "squad_id": str(self.team_id),
                "is_user_proxy": human,
            }
        )

    def tick(self, seconds: float) -> None:
        """Let ``seconds`` pass before the next message."""
        self.clock += timedelta(seconds=seconds)

    def add(self, message: Message, sender: ActorAddress | None) -> Message:
        """Append ``message`` as sent by ``sender``, stamped with the team and the clock."""
        self.clock += self.step
        message.sender = sender
        message.team_id = self.team_id
        message.timestamp = self.clock
        self.messages.append(message)
        return message

    # -- what a run records -----------------------------------------------------------
    def _start(self, address: ActorAddress, parent: ActorAddress | None) -> None:
        from akgentic.core.agent_config import BaseConfig
        from akgentic.core.messages.orchestrator import StartMessage

        config = BaseConfig(name=address.name, role=address.role)
        self.add(StartMessage(config=config, parent=parent), address)

    def member(
        self,
        name: str,
        role: str | None = None,
        *,
        human: bool = False,
        hired_by: ActorAddress | None = None,
    ) -> ActorAddress:
        """Start a member (role: its name without ``@``); ``hired_by`` makes it a hire."""
        address = self.address(name, role or name.removeprefix("@"), human=human)
        self._start(address, hired_by or self.orchestrator)
        return address

    def tool_actor(self, name: str) -> ActorAddress:
        """Start a tool actor (``#Name``): infrastructure, not a member."""
        address = self.address(name, "ToolActor")
        self._start(address, self.orchestrator)
        return address

    def stop(self, member: ActorAddress) -> None:
        """The member stopped (fired, or the team stopped)."""
        from akgentic.core.messages.orchestrator import StopMessage

        self.add(StopMessage(), member)

    def send(
        self,
        sender: ActorAddress,
        recipient: ActorAddress,
        content: str = "",
        intent: Intent = "request",
    ) -> UUID:
        """``sender`` sent ``recipient`` an ``AgentMessage``; returns that message's id."""
        from akgentic.agent import AgentMessage
        from akgentic.core.messages.orchestrator import SentMessage

        inner = AgentMessage(content=content, type=intent)
        inner.sender = sender
        self.add(SentMessage(message=inner, recipient=recipient), sender)
        return inner.id

    def received(self, member: ActorAddress, message_id: UUID) -> None:
        """``member`` started handling the message (a turn begins)."""
        from akgentic.core.messages.orchestrator import ReceivedMessage

        self.add(ReceivedMessage(message_id=message_id), member)

    def processed(self, member: ActorAddress, message_id: UUID) -> None:
        """``member`` finished handling the message (the turn ends)."""
        from akgentic.core.messages.orchestrator import ProcessedMessage

        self.add(ProcessedMessage(message_id=message_id), member)

    def event(self, member: ActorAddress, event: Any) -> None:
        """A domain event of ``member`` (wrapped in an ``EventMessage``)."""
        from akgentic.core.messages.orchestrator import EventMessage

        self.add(EventMessage(event=event), member)

    def usage(
        self,
        member: ActorAddress,
        input_tokens: int,
        output_tokens: int,
        *,
        usd: float = 0.0,
        model: str = "gpt-4.1-mini",
    ) -> None:
        """One model response of ``member`` and what it cost."""
        from akgentic.llm.events import LlmUsageEvent

        usage = LlmUsageEvent(
            "run", model, "openai", input_tokens, output_tokens, estimated_cost_usd=usd
        )
        self.event(member, usage)

    def tool_call(self, member: ActorAddress, tool: str, call_id: str) -> None:
        """``member``'s model called ``tool``."""
        from akgentic.llm.events import ToolCallEvent

        self.event(member, ToolCallEvent("run", tool, call_id, "{}"))

    def tool_return(
        self, member: ActorAddress, tool: str, call_id: str, *, success: bool = True
    ) -> None:
        """The tool call ``call_id`` got its answer (``success=False``: an error)."""
        from akgentic.llm.events import ToolReturnEvent

        self.event(member, ToolReturnEvent("run", tool, call_id, success))

    # -- as stored --------------------------------------------------------------------
    def stored(self) -> list[PersistedEvent]:
        """The messages as the store holds them, numbered from 1."""
        from akgentic.team.models import PersistedEvent

        return [
            PersistedEvent(
                team_id=self.team_id,
                sequence=index,
                event=message,
                timestamp=message.timestamp or self.clock,
            )
            for index, message in enumerate(self.messages, start=1)
        ]
