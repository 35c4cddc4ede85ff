"""What the console shows, computed from messages: event rows, the roster, open questions.

Every function here reads messages (decoded from the store or seen live) and
returns plain JSON data; none of them changes anything. Content is passed
through as strings: escaping is the page's business, and it only ever writes
text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.core.actor_address import ActorAddress
    from akgentic.core.messages.message import Message
    from akgentic.team.models import AgentStateSnapshot

__all__ = ["event_row", "pending_questions", "roster", "usage_by_member"]

#: Characters of content kept in a row; the inspector shows the whole stored JSON.
CONTENT_LIMIT = 20_000


def _name(address: ActorAddress | None) -> str | None:
    return address.name if address is not None else None


def _content(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= CONTENT_LIMIT else value[:CONTENT_LIMIT] + "…"


def event_row(message: Message, sequence: int | None = None) -> dict[str, Any]:
    """One message as a row of the conversation and of the event inspector.

    ``kind`` is ``"message"`` for what one member sent another (a ``SentMessage``)
    and ``"event"`` for everything else (starts, telemetry, domain events).
    """
    from akgentic.core.messages.orchestrator import EventMessage, NotificationMessage, SentMessage

    row: dict[str, Any] = {
        "seq": sequence,
        "id": str(message.id),
        "type": type(message).__name__,
        "kind": "event",
        "time": message.timestamp.isoformat() if message.timestamp is not None else None,
        "sender": _name(message.sender),
        "recipient": None,
        "message_type": None,
        "intent": None,
        "content": None,
        "message_id": None,
        "to_human": False,
    }
    if isinstance(message, SentMessage):
        inner = message.message
        row["kind"] = "message"
        row["recipient"] = _name(message.recipient)
        row["message_type"] = type(inner).__name__
        intent = getattr(inner, "type", None)
        row["intent"] = intent if isinstance(intent, str) else None
        row["content"] = _content(getattr(inner, "content", None))
        row["message_id"] = str(inner.id)
        row["to_human"] = bool(message.recipient.is_user_proxy)
    elif isinstance(message, EventMessage):
        row["message_type"] = type(message.event).__name__
        if row["message_type"] == "TurnFailed":  # its one line, shown in the conversation
            row["content"] = _content(getattr(message.event, "cause", None))
    elif isinstance(message, NotificationMessage):
        row["content"] = _content(message.content)
    return row


def usage_by_member(messages: Iterable[Message]) -> dict[str, dict[str, float]]:
    """Token usage and estimated cost per member name, from its ``LlmUsageEvent``\\ s."""
    from akgentic.core.messages.orchestrator import EventMessage
    from akgentic.llm.events import LlmUsageEvent

    totals: dict[str, dict[str, float]] = {}
    for message in messages:
        if not isinstance(message, EventMessage) or not isinstance(message.event, LlmUsageEvent):
            continue
        name = _name(message.sender) or "?"
        entry = totals.setdefault(
            name, {"input_tokens": 0, "output_tokens": 0, "requests": 0, "cost_usd": 0.0}
        )
        event = message.event
        entry["input_tokens"] += event.input_tokens
        entry["output_tokens"] += event.output_tokens
        entry["requests"] += event.requests
        entry["cost_usd"] += event.estimated_cost_usd
    return totals


def _model_label(config: object, state: object | None) -> str | None:
    active = getattr(getattr(state, "tool_state", None), "active_model", None)
    if isinstance(active, str) and active:
        return active
    model_cfg = getattr(config, "model_cfg", None)
    if model_cfg is None:
        return None
    return f"{getattr(model_cfg, 'provider', '?')}:{getattr(model_cfg, 'model', '?')}"


def roster(
    messages: Sequence[Message],
    states: Sequence[AgentStateSnapshot],
    busy: Mapping[str, bool],
    live_names: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """The members who started and did not stop, with role, model, busy and token usage.

    ``busy`` maps an agent id to whether it is handling a message now (the
    console's live view); ``live_names``, when the team runs here, restricts the
    list to the members the orchestrator knows.
    """
    from akgentic.team.restorer import live_starts

    by_agent = {snapshot.agent_id: snapshot.state for snapshot in states}
    usage = usage_by_member(messages)
    wanted = set(live_names) if live_names is not None else None
    rows: list[dict[str, Any]] = []
    for start in live_starts(messages):
        if start.sender is None:
            continue
        name = start.config.name
        if name.startswith("#") or name == "@Orchestrator":
            continue  # tool actors and the orchestrator are infrastructure, not members
        if wanted is not None and name not in wanted:
            continue
        agent_id = str(start.sender.agent_id)
        spent = usage.get(name, {})
        rows.append(
            {
                "name": name,
                "role": start.config.role,
                "agent_id": agent_id,
                "model": _model_label(start.config, by_agent.get(agent_id)),
                "human": bool(start.sender.is_user_proxy),
                "busy": bool(busy.get(agent_id, False)),
                "input_tokens": int(spent.get("input_tokens", 0)),
                "output_tokens": int(spent.get("output_tokens", 0)),
                "cost_usd": round(float(spent.get("cost_usd", 0.0)), 6),
            }
        )
    return rows


def pending_questions(events: Sequence[tuple[int, Message]]) -> list[dict[str, Any]]:
    """Requests agents sent to a human that no human has answered yet, oldest first.

    A question is a ``SentMessage`` to a user proxy whose message has the intent
    ``request``; it is answered once a user proxy sends a message whose
    ``parent_id`` is the question's id (what ``process_human_input`` does).
    A budget question is also answered by the change or stop that settled it
    (``BudgetChanged`` / ``BudgetStopped`` naming it), typed anywhere.
    Computed from the log, so questions survive a restart of the console or
    of the team.
    """
    from akgentic.core.messages.orchestrator import EventMessage, SentMessage
    from akgentic.llm.budget_events import BudgetChanged, BudgetStopped

    asked: dict[str, dict[str, Any]] = {}
    answered: set[str] = set()
    for sequence, message in events:
        if isinstance(message, EventMessage):
            settled = message.event
            if isinstance(settled, BudgetChanged | BudgetStopped) and settled.question_id:
                answered.add(settled.question_id)
            continue
        if not isinstance(message, SentMessage):
            continue
        inner = message.message
        from_human = message.sender is not None and message.sender.is_user_proxy
        if from_human and inner.parent_id is not None:
            answered.add(str(inner.parent_id))
        elif (
            not from_human
            and message.recipient.is_user_proxy
            and getattr(inner, "type", None) == "request"
        ):
            asked[str(inner.id)] = {
                "id": str(inner.id),
                "seq": sequence,
                "from": _name(message.sender),
                "to": message.recipient.name,
                "content": _content(getattr(inner, "content", None)) or "",
                "time": inner.timestamp.isoformat() if inner.timestamp is not None else None,
            }
    return [q for key, q in asked.items() if key not in answered]
