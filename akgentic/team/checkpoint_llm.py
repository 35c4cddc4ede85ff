"""How a checkpoint keeps a live LLM agent's conversation as short as its live context.

An agent's restore (``ReactAgent.restore_context``) rebuilds its history by replaying
its own events in order with :func:`~akgentic.llm.context.replay_history`: each
``LlmMessageEvent`` appends its message, an ``LlmMessageWithheldEvent`` or an
``LlmContextCompactedEvent`` rewrites the history, a clear empties it. Nothing else
in those events is read back: the system-prompt hash comes from the last
``LlmSystemPromptEvent``, the lifetime counters from the usage events, and tool
events play no part.

So at a compaction the fold may replace the agent's kept history events (messages,
withheld notes, earlier compactions, all after its last clear) by one
``LlmMessageEvent`` per message of the history the compaction leaves: replaying
them rebuilds that history exactly, whatever the compaction did (kept system
prompts, the summary, orphan tool returns dropped). A replay never yields more
messages than it read events, so the replaced events (and the compaction's own
place) always have room for them. The new events take the places of the last of
the replaced ones, in order, so they stay where the agent's history stood in the
log: after its last clear, before any later event. A place whose event already
carries the very message it must hold keeps its event (and its stored text);
any other is filled by a copy of the event there with the message swapped in, so
the rewrite is a pure function of the kept events, as the checkpoint must be.
Tool events of calls no longer in the history, and system-prompt events but the
last, go too. Usage events stay: the budget counts every run.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic_ai.messages import ModelMessage

from akgentic.core.messages.orchestrator import EventMessage
from akgentic.llm.context import replay_history
from akgentic.llm.events import (
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmMessageWithheldEvent,
    LlmSystemPromptEvent,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.team.models import PersistedEvent

__all__ = ["compact_own"]

_HISTORY = (LlmMessageEvent, LlmMessageWithheldEvent, LlmContextCompactedEvent)
_TOOLS = (ToolCallEvent, ToolReturnEvent)


def compact_own(
    kept: dict[int, PersistedEvent],
    texts: dict[int, str],
    own: Iterable[int],
    compaction: PersistedEvent,
) -> list[int] | None:
    """Fold ``compaction`` into an agent's kept events (see the module doc).

    ``own`` lists, ascending, the agent's sequences that may hold its conversation
    events (others, and sequences no longer kept, are passed over); ``kept`` and
    ``texts`` are updated in place, the compaction's own place included when a
    message goes there. Returns the agent's conversation events kept afterwards
    (ascending), or ``None`` (nothing changed) when the compaction is to be kept
    as it is.
    """
    wrapper = compaction.event
    assert isinstance(wrapper, EventMessage)
    slots: list[int] = []
    prompts: list[int] = []
    tools: list[tuple[int, str]] = []
    seen: list[int] = []
    messages: list[ModelMessage] = []
    for sequence in own:
        stored = kept.get(sequence)
        message = stored.event if stored is not None else None
        if not isinstance(message, EventMessage):
            continue  # dropped since, or the agent's StartMessage
        payload = message.event
        if isinstance(payload, _HISTORY):
            slots.append(sequence)
            messages = replay_history(messages, payload)
        elif isinstance(payload, LlmSystemPromptEvent):
            prompts.append(sequence)
        elif isinstance(payload, _TOOLS):
            tools.append((sequence, payload.tool_call_id))
        else:
            continue
        seen.append(sequence)
    history = replay_history(messages, wrapper.event)
    slots.append(compaction.sequence)
    if len(history) > len(slots):  # cannot happen (see the module doc); replay it instead
        return None
    # The last places before the compaction's own, unless every place is needed.
    places = slots[-1 - len(history) : -1] if len(history) < len(slots) else slots
    for sequence, kept_message in zip(places, history, strict=True):
        template = kept.get(sequence, compaction)
        payload = template.event.event if isinstance(template.event, EventMessage) else None
        if isinstance(payload, LlmMessageEvent) and payload.message is kept_message:
            continue
        kept[sequence] = _carrying(template, kept_message)
        texts.pop(sequence, None)
    dropped = set(slots).difference(places)
    dropped.update(prompts[:-1])
    calls = _call_ids(history)
    dropped.update(sequence for sequence, call in tools if call not in calls)
    for sequence in dropped:
        if kept.pop(sequence, None) is not None:
            texts.pop(sequence, None)
    remaining = [sequence for sequence in seen if sequence not in dropped]
    if places and places[-1] == compaction.sequence:
        remaining.append(compaction.sequence)
    return remaining


def _carrying(template: PersistedEvent, message: ModelMessage) -> PersistedEvent:
    """``template`` (an event of the agent) carrying ``message`` as an ``LlmMessageEvent``."""
    wrapper = template.event.model_copy(update={"event": LlmMessageEvent(message)})
    return template.model_copy(update={"event": wrapper})


def _call_ids(history: list[ModelMessage]) -> set[str]:
    return {
        str(call)
        for message in history
        for part in message.parts
        if (call := getattr(part, "tool_call_id", None)) is not None
    }
