"""Who is busy and what each member said last, read from the orchestrator's telemetry.

This is the no-model form of ``team_activity``: nothing is summarised, messages are
only truncated, and no actor is created.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from uuid import UUID

from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import (
    HandledMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
)

__all__ = ["render_activity"]


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_activity(
    members: Sequence[ActorAddress],
    history: Iterable[Message],
    *,
    recent_messages: int,
    max_chars: int,
) -> str:
    """One paragraph per member: busy or idle, then their latest sent messages."""
    wanted = {m.agent_id: m for m in members}
    open_turns: dict[UUID, set[UUID]] = defaultdict(set)
    latest: dict[UUID, deque[str]] = defaultdict(lambda: deque(maxlen=max(recent_messages, 1)))
    for message in history:
        sender = message.sender
        if sender is None or sender.agent_id not in wanted:
            continue
        key = sender.agent_id
        if isinstance(message, ReceivedMessage):
            open_turns[key].add(message.message_id)
        elif isinstance(message, ProcessedMessage | HandledMessage):
            open_turns[key].discard(message.message_id)
        elif isinstance(message, SentMessage) and recent_messages:
            content = getattr(message.message, "content", None)
            if isinstance(content, str):
                latest[key].append(f"  → {message.recipient.name}: {_cut(content, max_chars)}")
    if not members:
        return "The team has no members yet."
    blocks: list[str] = []
    for member in members:
        status = "busy" if open_turns.get(member.agent_id) else "idle"
        lines = [f"{member.name} ({member.role}) — {status}"]
        sent = list(latest.get(member.agent_id, ())) if recent_messages else []
        lines += sent or ["  (nothing sent yet)"]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
