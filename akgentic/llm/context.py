"""The durable conversation history of one agent, and the events it reports.

Every message that joins the history goes through :meth:`ContextManager.add_message`,
which tells the observers, in this order: the :class:`LlmMessageEvent`, then one
tool event per tool part (in part order), then the :class:`LlmUsageEvent` of a
model response. Replaying those events (see ``ReactAgent.restore_context``)
rebuilds the same history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol, cast, runtime_checkable

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from akgentic.llm.events import (
    LlmContextClearedEvent,
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmMessageWithheldEvent,
    LlmSystemPromptEvent,
    LlmUsageEvent,
    SystemPromptPartSnapshot,
    ToolCallEvent,
    ToolReturnEvent,
)

__all__ = ["SUMMARY_PREFIX", "ContextManager", "ContextObserver", "UsagePricer", "replay_history"]

SUMMARY_PREFIX = "[Conversation summary] "

# Part kinds that carry no tool event. Anything not listed here and not a tool part
# is refused: a renamed kind in a new pydantic-ai must not silently lose tool events.
_SILENT_PART_KINDS = frozenset(
    {
        "system-prompt",
        "user-prompt",
        "text",
        "thinking",
        "compaction",
        "file",
        "speech",
        "instruction",
        "instruction-delta",
        "instruction-digest",
        "instruction-baseline",
        "retry-feedback",
        "tool-availability-delta",
        "capability-load-delta",
        "model-settings-delta",
        "builtin-tool-call",
        "builtin-tool-return",
    }
)

UsagePricer = Callable[[str, str, int, int, int, int], float]
"""``(model, provider, input, output, cache_read, cache_write) -> USD`` used for usage events."""


@runtime_checkable
class ContextObserver(Protocol):
    """Receives every LLM event of an agent (typically the owning actor)."""

    def notify_event(self, event: object) -> None:
        """Handle one event; an exception here propagates to whoever changed the context."""
        ...


def is_system_bearing(message: ModelMessage) -> bool:
    """True for a request that carries system-prompt parts."""
    return isinstance(message, ModelRequest) and any(
        isinstance(p, SystemPromptPart) for p in message.parts
    )


def system_parts(messages: Sequence[ModelMessage]) -> list[SystemPromptPart]:
    """System-prompt parts of the first request of ``messages``."""
    for message in messages:
        if isinstance(message, ModelRequest):
            return [p for p in message.parts if isinstance(p, SystemPromptPart)]
    return []


def system_prompt_hash(parts: Sequence[SystemPromptPart]) -> str:
    """sha256 over the parts' contents, length-prefixed so part boundaries matter."""
    digest = hashlib.sha256()
    for part in parts:
        raw = part.content.encode("utf-8")
        digest.update(f"{len(raw)}:".encode("ascii"))
        digest.update(raw)
    return digest.hexdigest()


def drop_orphan_tool_returns(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Remove tool returns whose call is no longer in ``messages`` (empty requests go too)."""
    calls: set[str] = set()
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls.update(p.tool_call_id for p in message.parts if p.part_kind == "tool-call")
            out.append(message)
            continue
        kept = [
            p
            for p in message.parts
            if p.part_kind not in ("tool-return", "retry-prompt")
            or getattr(p, "tool_name", None) is None
            or getattr(p, "tool_call_id", None) in calls
        ]
        if len(kept) == len(message.parts):
            out.append(message)
        elif kept:
            out.append(_replace_parts(message, kept))
    return out


def replay_history(messages: list[ModelMessage], event: object) -> list[ModelMessage]:
    """The history after replaying ``event`` on ``messages`` (which may be appended to).

    The one place that says how each persisted LLM event changes a history: an
    agent's restore and the team checkpoint's fold both go through it. Events
    that leave the history alone return ``messages`` itself.
    """
    if isinstance(event, LlmMessageEvent):
        messages.append(event.message)
        return messages
    if isinstance(event, LlmContextCompactedEvent):
        return ContextManager.fold_compaction(messages, event)
    if isinstance(event, LlmMessageWithheldEvent):
        return ContextManager.fold_withheld(messages, event) or messages
    if isinstance(event, LlmContextClearedEvent):
        return []
    return messages


def _last_timestamp(messages: Sequence[ModelMessage]) -> datetime:
    for message in reversed(messages):
        if message.timestamp is not None:
            return message.timestamp
        for part in reversed(message.parts):
            stamp = getattr(part, "timestamp", None)
            if isinstance(stamp, datetime):
                return stamp
    return datetime(1970, 1, 1, tzinfo=UTC)


def _replace_parts(message: ModelRequest, parts: Sequence[ModelRequestPart]) -> ModelRequest:
    return replace(message, parts=list(parts))


class ContextManager:
    """Ordered message history plus the observers that persist it as events.

    ``max_messages`` keeps a sliding window: the system-bearing requests always
    stay (they count against the window) and the most recent others fill it.
    """

    def __init__(self, max_messages: int | None = None, pricer: UsagePricer | None = None) -> None:
        if max_messages is not None and max_messages < 0:
            raise ValueError("max_messages must not be negative")
        self._max_messages = max_messages
        self._messages: list[ModelMessage] = []
        self._observers: list[ContextObserver] = []
        self._pending_prompts: list[str] = []
        self._system_hash: str | None = None
        self._pricer = pricer
        self.last_input_tokens = 0

    # ------------------------------------------------------------ observers

    def subscribe(self, observer: ContextObserver) -> None:
        """Add an observer (adding the same one twice has no effect)."""
        if observer not in self._observers:
            self._observers.append(observer)

    def unsubscribe(self, observer: ContextObserver) -> None:
        """Remove an observer if present."""
        if observer in self._observers:
            self._observers.remove(observer)

    def _emit(self, event: object) -> None:
        for observer in list(self._observers):
            observer.notify_event(event)

    # ------------------------------------------------------------- history

    @property
    def messages(self) -> list[ModelMessage]:
        """A copy of the history."""
        return list(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def add_message(self, message: ModelMessage) -> None:
        """Append ``message``, apply the window, then report it (see module docstring)."""
        events = self._events_for(message)
        self._messages.append(message)
        self._apply_window()
        if isinstance(message, ModelResponse) and message.usage is not None:
            self.last_input_tokens = message.usage.input_tokens or 0
        for event in events:
            self._emit(event)

    def _events_for(self, message: ModelMessage) -> list[object]:
        events: list[object] = [LlmMessageEvent(message)]
        tool_run_id = str(message.run_id)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                events.append(
                    ToolCallEvent(
                        run_id=tool_run_id,
                        tool_name=str(part.tool_name),
                        tool_call_id=str(part.tool_call_id),
                        arguments=part.args_as_json_str(),
                    )
                )
            elif isinstance(part, ToolReturnPart):
                events.append(
                    ToolReturnEvent(
                        run_id=tool_run_id,
                        tool_name=str(part.tool_name),
                        tool_call_id=str(part.tool_call_id),
                        success=part.outcome == "success",
                    )
                )
            elif part.part_kind == "retry-prompt":
                # Legacy retry part: only one that names a tool answers a tool call.
                tool_name = getattr(part, "tool_name", None)
                if tool_name is not None:
                    events.append(
                        ToolReturnEvent(
                            run_id=tool_run_id,
                            tool_name=str(tool_name),
                            tool_call_id=str(getattr(part, "tool_call_id", "")),
                            success=False,
                        )
                    )
            elif part.part_kind not in _SILENT_PART_KINDS:
                raise ValueError(
                    f"unknown message part kind {part.part_kind!r}; update akgentic.llm.context"
                )
        if isinstance(message, ModelResponse):
            events.append(self._usage_event(message))
        return events

    def _usage_event(self, response: ModelResponse) -> LlmUsageEvent:
        usage = response.usage
        model_name = response.model_name or ""
        provider_name = response.provider_name or ""
        inp, out = usage.input_tokens or 0, usage.output_tokens or 0
        cr, cw = usage.cache_read_tokens or 0, usage.cache_write_tokens or 0
        cost = self._pricer(model_name, provider_name, inp, out, cr, cw) if self._pricer else 0.0
        return LlmUsageEvent(
            run_id=response.run_id or "",
            model_name=model_name,
            provider_name=provider_name,
            input_tokens=inp,
            output_tokens=out,
            cache_read_tokens=cr,
            cache_write_tokens=cw,
            requests=1,
            estimated_cost_usd=cost,
        )

    def _apply_window(self) -> None:
        limit = self._max_messages
        if limit is None or len(self._messages) <= limit:
            return
        system = [i for i, m in enumerate(self._messages) if is_system_bearing(m)]
        room = max(limit - len(system), 0)
        others = [i for i, m in enumerate(self._messages) if not is_system_bearing(m)]
        keep = set(system) | set(others[len(others) - room :] if room else [])
        window = [m for i, m in enumerate(self._messages) if i in keep]
        self._messages = drop_orphan_tool_returns(window)

    def restore(self, messages: Iterable[ModelMessage]) -> None:
        """Replace the history without emitting events or applying the window."""
        self._messages = list(messages)

    def clear(self) -> None:
        """Drop the history silently (no event)."""
        self._messages = []
        self._system_hash = None

    def clear_context(self, run_id: str = "") -> int:
        """Drop the history, report an :class:`LlmContextClearedEvent`, return the count."""
        count = len(self._messages)
        self.clear()
        self._pending_prompts.clear()
        self.last_input_tokens = 0
        self._emit(LlmContextClearedEvent(run_id=run_id, cleared_message_count=count))
        return count

    # --------------------------------------------------------- user prompts

    def append_user_prompt(self, text: str) -> None:
        """Add a user-role note to the history, or hold it until the first run.

        Before the first run the history must stay empty (pydantic-ai only adds
        system prompts to an empty history), so the text waits and is folded into
        the first run's prompt.
        """
        if self._messages:
            self.add_message(ModelRequest(parts=[UserPromptPart(text)]))
        else:
            self._pending_prompts.append(text)

    def drain_pending_user_prompts(self) -> list[str]:
        """Return and forget the held pre-first-run prompts."""
        pending, self._pending_prompts = self._pending_prompts, []
        return pending

    # --------------------------------------------------------- system prompt

    def seed_system_prompt_hash(self, content_hash: str | None) -> None:
        """Set the hash of the last recorded system prompt (used after a restore)."""
        self._system_hash = content_hash

    def record_system_prompt(self, run_id: str, messages: Sequence[ModelMessage]) -> None:
        """Report the system prompt of a run when it differs from the last one reported."""
        parts = system_parts(messages)
        if not parts:
            return
        content_hash = system_prompt_hash(parts)
        if content_hash == self._system_hash:
            return
        self._system_hash = content_hash
        snapshots = tuple(
            SystemPromptPartSnapshot(content=p.content, dynamic_ref=p.dynamic_ref) for p in parts
        )
        self._emit(LlmSystemPromptEvent(run_id=run_id, parts=snapshots, content_hash=content_hash))

    # ------------------------------------------------------------ compaction

    def compact(self, event: LlmContextCompactedEvent) -> None:
        """Apply ``event``'s fold to the history and report the event.

        The summary message is not reported as its own LlmMessageEvent: replay
        re-creates it from the compaction event.
        """
        self._messages = self.fold_compaction(self._messages, event)
        self.last_input_tokens = 0
        self._emit(event)

    @staticmethod
    def fold_compaction(
        messages: Sequence[ModelMessage], event: LlmContextCompactedEvent
    ) -> list[ModelMessage]:
        """Replace the first ``replaced_message_count`` messages by the summary.

        System-prompt parts of the replaced messages are kept (in their own
        requests, ahead of the summary); tool returns left without their call are
        dropped so a call and its return are never separated.
        """
        count = min(event.replaced_message_count, len(messages))
        head: list[ModelMessage] = []
        for message in messages[:count]:
            if isinstance(message, ModelRequest):
                kept: list[ModelRequestPart] = [
                    p for p in message.parts if isinstance(p, SystemPromptPart)
                ]
                if kept:
                    head.append(_replace_parts(message, kept))
        # Stamped from the folded history, not the clock: replay must rebuild an equal message.
        stamp = _last_timestamp(messages[:count])
        summary = ModelRequest(
            parts=[UserPromptPart(SUMMARY_PREFIX + event.summary, timestamp=stamp)],
            timestamp=stamp,
        )
        folded = [*head, summary, *messages[count:]]
        return drop_orphan_tool_returns(folded)

    # ------------------------------------------------------------ withholding

    def withhold_last_request(self, event: LlmMessageWithheldEvent) -> bool:
        """Apply ``event`` (see :meth:`fold_withheld`) and report it; False if nothing matched."""
        folded = self.fold_withheld(self._messages, event)
        if folded is None:
            return False
        self._messages = folded
        self.last_input_tokens = 0
        self._emit(event)
        return True

    @staticmethod
    def fold_withheld(
        messages: Sequence[ModelMessage], event: LlmMessageWithheldEvent
    ) -> list[ModelMessage] | None:
        """``messages`` with the last request of ``event.run_id`` reduced to the note.

        User-prompt contents become the note and tool returns keep their call id with
        the note as content (a call is never left unanswered); system prompts stay.
        None when no request of that run is in ``messages``.
        """
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, ModelRequest) and message.run_id == event.run_id:
                parts: list[ModelRequestPart] = []
                for part in message.parts:
                    # Exact classes: a subclass of ToolReturnPart carries typed content.
                    if type(part) in (UserPromptPart, ToolReturnPart):
                        part = replace(cast(Any, part), content=event.note)
                    parts.append(part)
                return [*messages[:index], _replace_parts(message, parts), *messages[index + 1 :]]
        return None
