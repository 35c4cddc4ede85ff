"""The checkpoint fold's cost per event, and what a long-lived LLM agent's checkpoint keeps.

Prints one JSON object (its last line)::

    {"fold_us_per_event_telemetry": ..., "fold_us_per_event_llm": ...,
     "fold_us_per_event_llm_compacting": ..., "compaction_fold_us": ...,
     "kept_events_after_turns": {...}, "checkpoint_kib_after_turns": {...},
     "conversation_kib_after_turns": {...}, "loadavg": [...]}

Three streams of ``PersistedEvent`` are built in memory, then folded by
``CheckpointFold.add`` (the orchestrator thread's hot path), best of
``--repeat`` passes:

* ``telemetry``: :func:`akgentic.testing.event_store_checkpoint.stream_messages`
  (sent messages and closed notifications of two members, one fired);
* ``llm``: one agent's turns as its ``ContextManager`` reports them (request,
  response with a tool call, tool return, final response: four
  ``LlmMessageEvent``, tool and usage events), with telemetry between them;
* ``llm_compacting``: the same with an ``LlmContextCompactedEvent`` keeping the
  last turn every ``--compact-every`` turns. ``compaction_fold_us`` is the mean
  time of folding one compaction event.

``kept_events_after_turns``/``checkpoint_kib_after_turns`` give the kept events
and the checkpoint's size after 100, 1,000 and 5,000 turns of ``llm_compacting``,
``conversation_kib_after_turns`` the part of it that is the agent's conversation
(messages, compactions, system-prompt and tool events; the rest is its usage events
and closed notifications, one each per turn).
Run: ``.venv/bin/python bench/checkpoint_fold.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from uuid import UUID, uuid4

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages import ClosedNotification, SentMessage, UserMessage
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage, StartMessage
from akgentic.llm.context import ContextManager
from akgentic.llm.events import (
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmSystemPromptEvent,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.team.checkpoint import CheckpointFold
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.codec import encode_event
from akgentic.testing.event_store_checkpoint import stream_messages, team_address

_CONVERSATION = (
    LlmMessageEvent,
    LlmContextCompactedEvent,
    LlmSystemPromptEvent,
    ToolCallEvent,
    ToolReturnEvent,
)


class _Collect:
    def __init__(self) -> None:
        self.events: list[object] = []

    def notify_event(self, event: object) -> None:
        self.events.append(event)


def llm_stream(team_id: UUID, turns: int, compact_every: int = 0) -> Iterator[Message]:
    """An agent's start, then ``turns`` tool-using turns; compactions keep the last turn."""
    orchestrator = team_address(team_id, "@Orchestrator", "akgentic.core.orchestrator.Orchestrator")
    agent = team_address(team_id, "@Writer", "akgentic.agent.BaseAgent")
    yield StartMessage(config=BaseConfig(name="@Orchestrator", role="Orchestrator")).init(
        orchestrator, team_id
    )
    yield StartMessage(config=BaseConfig(name="@Writer", role="Writer"), parent=orchestrator).init(
        agent, team_id
    )
    context = ContextManager()
    seen = _Collect()
    context.subscribe(seen)
    for turn in range(turns):
        run = f"run-{turn}"
        first: list[object] = [SystemPromptPart("You write.")] if turn == 0 else []
        question = f"question {turn}: " + "words " * 40
        context.add_message(ModelRequest(parts=[*first, UserPromptPart(question)], run_id=run))  # type: ignore[list-item]
        call = f"call-{turn}"
        usage = RequestUsage(input_tokens=100, output_tokens=20)
        context.add_message(
            ModelResponse(parts=[ToolCallPart("look", {"q": turn}, call)], usage=usage, run_id=run)
        )
        context.add_message(
            ModelRequest(parts=[ToolReturnPart("look", "found " * 30, call)], run_id=run)
        )
        context.add_message(
            ModelResponse(parts=[TextPart("answer " * 30)], usage=usage, run_id=run)
        )
        if compact_every and (turn + 1) % compact_every == 0:
            context.compact(
                LlmContextCompactedEvent(
                    run_id="",
                    strategy_id="sliding_window",
                    summary=f"[Sliding window: turn {turn}]",
                    replaced_message_count=len(context) - 4,
                )
            )
        user = UserMessage(content=question).init(orchestrator, team_id)
        yield SentMessage(message=user, recipient=agent).init(orchestrator, team_id)
        for event in seen.events:
            yield EventMessage(event=event).init(agent, team_id)
        seen.events.clear()
        yield EventMessage(event=ClosedNotification(message_id=user.id)).init(agent, team_id)


def persisted(team_id: UUID, messages: Iterator[Message]) -> list[PersistedEvent]:
    return [
        PersistedEvent(team_id=team_id, sequence=number, event=message)
        for number, message in enumerate(messages, start=1)
    ]


def _conversation(event: PersistedEvent) -> bool:
    """An event of the agent's conversation (not its usage, not telemetry)."""
    message = event.event
    return isinstance(message, EventMessage) and isinstance(message.event, _CONVERSATION)


def per_event_us(events: list[PersistedEvent], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        fold = CheckpointFold()
        add = fold.add
        start = time.perf_counter()
        for event in events:
            add(event)
        best = min(best, time.perf_counter() - start)
    return best / len(events) * 1e6


def compaction_us(events: list[PersistedEvent], repeat: int) -> float:
    """Mean time of folding one compaction event (the rest folded untimed)."""
    best = float("inf")
    for _ in range(repeat):
        fold = CheckpointFold()
        spent, count = 0.0, 0
        for event in events:
            message = event.event
            if isinstance(message, EventMessage) and isinstance(
                message.event, LlmContextCompactedEvent
            ):
                start = time.perf_counter()
                fold.add(event)
                spent += time.perf_counter() - start
                count += 1
            else:
                fold.add(event)
        best = min(best, spent / max(count, 1))
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compact-every", type=int, default=10)
    args = parser.parse_args()
    team_id = uuid4()
    telemetry = persisted(team_id, stream_messages(team_id, args.turns * 5))
    llm = persisted(team_id, llm_stream(team_id, args.turns))
    compacting = persisted(team_id, llm_stream(team_id, args.turns, args.compact_every))
    out: dict[str, object] = {
        "fold_us_per_event_telemetry": round(per_event_us(telemetry, args.repeat), 3),
        "fold_us_per_event_llm": round(per_event_us(llm, args.repeat), 3),
        "fold_us_per_event_llm_compacting": round(per_event_us(compacting, args.repeat), 3),
        "compaction_fold_us": round(compaction_us(compacting, args.repeat), 1),
    }
    kept: dict[int, int] = {}
    kib: dict[int, float] = {}
    conversation: dict[int, float] = {}
    for turns in (100, 1000, 5000):
        fold = CheckpointFold().extend(
            persisted(team_id, llm_stream(team_id, turns, args.compact_every))
        )
        kept[turns] = len(fold.kept)
        kib[turns] = round(len(fold.checkpoint(team_id).payload) / 1024, 1)
        texts = [encode_event(e) for e in fold.kept if _conversation(e)]
        conversation[turns] = round(sum(map(len, texts)) / 1024, 1)
    out["kept_events_after_turns"] = kept
    out["checkpoint_kib_after_turns"] = kib
    out["conversation_kib_after_turns"] = conversation
    out["events"] = {"telemetry": len(telemetry), "llm": len(llm), "compacting": len(compacting)}
    out["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
