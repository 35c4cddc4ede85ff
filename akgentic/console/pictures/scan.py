"""One pass over a team's log, collecting what the three pictures draw.

The log is read as stored (or as it streams): ``StartMessage`` / ``StopMessage``
give the members and who started whom, ``SentMessage`` the messages between
members, ``ReceivedMessage`` / ``ProcessedMessage`` each member's turns,
``ToolCallEvent`` / ``ToolReturnEvent`` its tool calls and ``LlmUsageEvent`` its
tokens and estimated cost (priced by :func:`akgentic.llm.pricing.estimate_cost`
when the response was recorded). Tool actors (``#...``) and the orchestrator are
infrastructure, not members, as in the roster. Times are seconds since the first
timestamped message of the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = ["Bar", "LogScan", "Member", "UsagePoint", "scan_log"]


@dataclass
class Member:
    """A member of the team, as its ``StartMessage`` describes it."""

    id: str
    name: str
    role: str
    human: bool
    #: Agent id of the actor that started this one (a hirer), when it is a member.
    parent: str | None
    stopped: bool = False


@dataclass
class Bar:
    """A span of a member's time: a turn, or a tool call (``end`` None: still open)."""

    member: str
    start: float
    end: float | None
    label: str
    ok: bool = True


@dataclass
class UsagePoint:
    """One model response's usage: when, by whom, tokens and estimated USD."""

    member: str
    time: float
    total_tokens: int
    usd: float


@dataclass
class LogScan:
    """Everything the pictures need, by agent id (see the module docstring)."""

    members: dict[str, Member] = field(default_factory=dict)
    #: (sender id, recipient id) -> messages sent, between members only.
    sent: dict[tuple[str, str], int] = field(default_factory=dict)
    usage: list[UsagePoint] = field(default_factory=list)
    turns: list[Bar] = field(default_factory=list)
    tools: list[Bar] = field(default_factory=list)
    start: datetime | None = None
    #: Seconds from the first to the last timestamped message.
    duration: float = 0.0

    def name(self, agent_id: str) -> str:
        """The member's name (an id that is no member stays an id)."""
        member = self.members.get(agent_id)
        return member.name if member is not None else agent_id


def _is_infrastructure(name: str) -> bool:
    return name.startswith("#") or name == "@Orchestrator"


class _Scanner:
    def __init__(self) -> None:
        self.scan = LogScan()
        self.open_turns: dict[tuple[str, str], Bar] = {}
        self.open_tools: dict[tuple[str, str], Bar] = {}
        self.senders: dict[str, str] = {}  # message id -> sender name (a turn's cause)
        self.now = 0.0

    def clock(self, message: Message) -> float:
        stamp = message.timestamp
        if stamp is None:
            return self.now
        scan = self.scan
        if scan.start is None:
            scan.start = stamp
        self.now = max(self.now, (stamp - scan.start).total_seconds())
        return self.now


def scan_log(messages: Iterable[Message]) -> LogScan:
    """Read ``messages`` (oldest first) into a :class:`LogScan`."""
    from akgentic.core.messages.orchestrator import (
        EventMessage,
        ProcessedMessage,
        ReceivedMessage,
        SentMessage,
        StartMessage,
        StopMessage,
    )
    from akgentic.llm.events import LlmUsageEvent, ToolCallEvent, ToolReturnEvent

    state = _Scanner()
    scan = state.scan
    members = scan.members
    sent = scan.sent
    ids: dict[UUID, str] = {}  # formatting a UUID costs more than a lookup

    def text_id(agent_id: UUID) -> str:
        found = ids.get(agent_id)
        if found is None:
            found = ids[agent_id] = str(agent_id)
        return found

    for message in messages:
        now = state.clock(message)
        sender = message.sender
        if sender is None:
            continue
        agent = text_id(sender.agent_id)
        if isinstance(message, SentMessage):
            key = (agent, text_id(message.recipient.agent_id))
            sent[key] = sent.get(key, 0) + 1
            state.senders[str(message.message.id)] = sender.name
        elif isinstance(message, EventMessage):
            event = message.event
            if agent not in members:
                continue
            if isinstance(event, LlmUsageEvent):
                scan.usage.append(
                    UsagePoint(agent, now, event.total_tokens, event.estimated_cost_usd)
                )
            elif isinstance(event, ToolCallEvent):
                bar = Bar(agent, now, None, event.tool_name)
                state.open_tools[(agent, event.tool_call_id)] = bar
                scan.tools.append(bar)
            elif isinstance(event, ToolReturnEvent):
                bar_or_none = state.open_tools.pop((agent, event.tool_call_id), None)
                if bar_or_none is not None:
                    bar_or_none.end = now
                    bar_or_none.ok = event.success
        elif isinstance(message, ReceivedMessage):
            if agent in members:
                cause = state.senders.get(str(message.message_id), "")
                bar = Bar(agent, now, None, cause)
                state.open_turns[(agent, str(message.message_id))] = bar
                scan.turns.append(bar)
        elif isinstance(message, ProcessedMessage):
            bar_or_none = state.open_turns.pop((agent, str(message.message_id)), None)
            if bar_or_none is not None:
                bar_or_none.end = now
        elif isinstance(message, StartMessage):
            name = message.config.name
            if not _is_infrastructure(name) and agent not in members:
                parent = message.parent
                members[agent] = Member(
                    id=agent,
                    name=name,
                    role=message.config.role,
                    human=bool(sender.is_user_proxy),
                    parent=str(parent.agent_id) if parent is not None else None,
                )
        elif isinstance(message, StopMessage) and agent in members:
            members[agent].stopped = True
    for member in members.values():
        # Only a member can be a hirer; the orchestrator starting the first members is not.
        if member.parent is not None and member.parent not in members:
            member.parent = None
    scan.duration = state.now
    return scan
