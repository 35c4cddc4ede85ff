"""One line per stored event, for ``akgentic team inspect --events``.

A team's log is mostly telemetry wrapped in ``EventMessage``: the messages the model
was sent and answered (``LlmMessageEvent``), tool calls and returns, usage. Each gets a
summary that says what happened (``calls shout({"text": "hi"})``, ``shout returned:
HI!``, ``says: ...``), so a log can be read without loading it in Python.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["TABLE_WIDTH", "event_kind", "summarize"]

#: Longest summary the table shows (the JSON form is not cut).
TABLE_WIDTH = 100


def _cut(text: str, limit: int | None) -> str:
    flat = " ".join(text.split())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: limit - 1] + "…"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _part(part: Any) -> str:
    kind = getattr(part, "part_kind", type(part).__name__)
    if kind == "text":
        return f"says: {part.content}"
    if kind == "tool-call":
        return f"calls {part.tool_name}({_text(part.args)})"
    if kind == "tool-return":
        return f"{part.tool_name} returned: {_text(part.content)}"
    if kind == "retry-prompt":
        where = f" ({part.tool_name})" if getattr(part, "tool_name", None) else ""
        return f"retry{where}: {_text(part.content)}"
    if kind == "user-prompt":
        return f"prompt: {_text(part.content)}"
    if kind == "system-prompt":
        return f"system: {part.content}"
    if kind == "thinking":
        return "thinks"
    return str(kind)


def _model_message(message: Any) -> str:
    kind = getattr(message, "kind", "")
    parts = list(getattr(message, "parts", []))
    # The system prompt repeats on every first request of a run: name it, show the rest.
    system = [p for p in parts if getattr(p, "part_kind", "") == "system-prompt"]
    shown = [p for p in parts if p not in system] or system
    text = "; ".join(_part(part) for part in shown)
    if system and shown is not system:
        text += f" (+{len(system)} system prompt part(s))"
    who = "model" if kind == "response" else "to model"
    return f"{who}: {text}" if text else who


def _fields(value: Any) -> str:
    """The fields an event class adds, as ``k=v`` pairs."""
    from pydantic import BaseModel

    from akgentic.core.messages.message import Message

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif isinstance(value, BaseModel):
        base = Message.model_fields if isinstance(value, Message) else {}
        data = {k: getattr(value, k) for k in type(value).model_fields if k not in base}
    else:
        return _text(value)
    return ", ".join(f"{k}={_text(v)}" for k, v in data.items())


def _event(event: Any) -> str:
    from akgentic.llm.events import (
        LlmContextClearedEvent,
        LlmContextCompactedEvent,
        LlmMessageEvent,
        LlmSystemPromptEvent,
        LlmUsageEvent,
        ToolCallEvent,
        ToolReturnEvent,
    )
    from akgentic.tool.core.event import CommandsAnnouncedEvent

    if isinstance(event, LlmMessageEvent):
        return _model_message(event.message)
    if isinstance(event, ToolCallEvent):
        return f"tool call {event.tool_name}({event.arguments})"
    if isinstance(event, ToolReturnEvent):
        return f"tool return {event.tool_name}: {'ok' if event.success else 'failed'}"
    if isinstance(event, LlmUsageEvent):
        return (
            f"usage {event.model_name}: {event.input_tokens} in, {event.output_tokens} out, "
            f"{event.requests} request(s)"
        )
    if isinstance(event, LlmSystemPromptEvent):
        return f"system prompt: {len(event.parts)} part(s)"
    if isinstance(event, LlmContextCompactedEvent):
        return f"context compacted ({event.strategy_id}): {event.replaced_message_count} message(s)"
    if isinstance(event, LlmContextClearedEvent):
        return f"context cleared: {event.cleared_message_count} message(s)"
    if isinstance(event, CommandsAnnouncedEvent):
        return "commands: " + " ".join(f"/{d.name}" for d in event.commands)
    if event is None:
        return ""
    fields = _fields(event)
    return f"{type(event).__name__} {fields}".strip()


def event_kind(message: Any) -> str | None:
    """The class name of the event an ``EventMessage`` carries (None for other messages)."""
    from akgentic.core.messages.orchestrator import EventMessage

    if isinstance(message, EventMessage) and message.event is not None:
        return type(message.event).__name__
    return None


def summarize(message: Any, limit: int | None = TABLE_WIDTH) -> str:
    """What ``message`` (one stored event) says, on one line of at most ``limit`` characters."""
    from akgentic.core.messages.orchestrator import (
        EventMessage,
        NotificationMessage,
        SentMessage,
        StartMessage,
        StopMessage,
    )

    if isinstance(message, SentMessage):
        inner = message.message
        content = getattr(inner, "content", "")
        text = f"{type(inner).__name__} -> {message.recipient.name}: {_text(content)}"
    elif isinstance(message, EventMessage):
        text = _event(message.event)
    elif isinstance(message, StartMessage):
        text = f"{message.config.name} ({message.config.role}) started"
    elif isinstance(message, StopMessage):
        text = "stopped"
    elif isinstance(message, NotificationMessage):
        text = message.content
    else:
        content = getattr(message, "content", None)
        text = _text(content) if content is not None else ""
    return _cut(text, limit)
