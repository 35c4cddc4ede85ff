"""A compaction shrinks what a checkpoint keeps of an agent's conversation, and nothing else.

The conversations here are made by real ``ContextManager`` objects (as a ReactAgent
reports them) and stored the way a store does (encoded, then decoded); restores are
done by real ``ReactAgent.restore_context``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages import SentMessage, UserMessage
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage, StopMessage
from akgentic.llm.agent import ReactAgent
from akgentic.llm.context import SUMMARY_PREFIX, ContextManager, system_prompt_hash
from akgentic.llm.events import (
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmMessageWithheldEvent,
    LlmSystemPromptEvent,
    ToolCallEvent,
)
from akgentic.team.checkpoint import Checkpointer, CheckpointFold, checkpoint_of, fold_log
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.codec import decode_event, encode_event
from akgentic.testing.event_store_checkpoint import assert_checkpoints_pure, stream_messages


class Reported:
    """Turns what a ContextManager reports into the agent's stored events."""

    def __init__(self, log: list[Message], sender: ActorAddress, team_id: UUID) -> None:
        self.log, self.sender, self.team_id = log, sender, team_id

    def notify_event(self, event: object) -> None:
        self.log.append(EventMessage(event=event).init(self.sender, self.team_id))


class Conversation:
    """One agent's ContextManager, reporting into a shared log."""

    def __init__(self, log: list[Message], sender: ActorAddress, team_id: UUID) -> None:
        self.context = ContextManager()
        self.context.subscribe(Reported(log, sender, team_id))
        self.turns = 0

    def prompt(self, content: str, run: str) -> None:
        system = [SystemPromptPart(content)]
        self.context.record_system_prompt(run, [ModelRequest(parts=list(system))])

    def turn(self, *, tool: bool = True, system: str | None = None) -> str:
        number = self.turns
        self.turns += 1
        run = f"run-{number}"
        parts: list[Any] = [SystemPromptPart(system)] if system else []
        add = self.context.add_message
        add(ModelRequest(parts=[*parts, UserPromptPart(f"question {number}")], run_id=run))
        usage = RequestUsage(input_tokens=10 + number, output_tokens=3)
        if tool:
            call = f"call-{number}"
            args = {"n": number}
            add(ModelResponse(parts=[ToolCallPart("look", args, call)], usage=usage, run_id=run))
            add(ModelRequest(parts=[ToolReturnPart("look", f"found {number}", call)], run_id=run))
        add(ModelResponse(parts=[TextPart(f"answer {number}")], usage=usage, run_id=run))
        return run

    def compact(self, count: int) -> None:
        self.context.compact(
            LlmContextCompactedEvent(
                run_id="",
                strategy_id="test",
                summary=f"summary of {count}",
                replaced_message_count=count,
            )
        )


def _members(team_id: UUID) -> tuple[list[Message], ActorAddress, ActorAddress]:
    """The starts of an orchestrator and two LLM members (the second one never compacts)."""
    starts: list[Message] = list(stream_messages(team_id, 0))
    writer, other = (s.sender for s in starts[1:])
    assert writer is not None and other is not None
    return starts, writer, other


#: The writer's history as its ContextManager holds it at the end of each log made.
_LIVE: dict[UUID, list[ModelMessage]] = {}


def _conversation_log(team_id: UUID) -> tuple[list[PersistedEvent], ActorAddress, ActorAddress]:
    """Two LLM members through every kind of history change, telemetry between."""
    log, writer, other = _members(team_id)
    orchestrator = log[0].sender
    w = Conversation(log, writer, team_id)
    o = Conversation(log, other, team_id)

    def chatter() -> None:
        question = UserMessage(content="next").init(orchestrator, team_id)
        log.append(SentMessage(message=question, recipient=writer).init(orchestrator, team_id))
        o.turn(tool=False)

    w.prompt("You write.", "run-0")
    w.turn(system="You write.")
    chatter()
    w.compact(1)  # the system-bearing first request alone: the compaction's place is needed
    w.turn()
    w.turn()
    chatter()
    w.compact(len(w.context) - 2)  # cuts a call from its return: the orphan return goes
    run = w.turn()
    w.context.withhold_last_request(LlmMessageWithheldEvent(run_id=run, note="withheld"))
    w.prompt("You write, briefly.", "run-4")
    w.turn()
    w.compact(0)  # replaces nothing: the summary goes in front
    chatter()
    w.context.clear_context("run-5")
    w.prompt("You write again.", "run-5")
    w.turn(system="You write again.")
    for _ in range(3):
        w.turn()
        chatter()
        w.compact(len(w.context) - 4)  # keeps the last turn, as a sliding window does
    w.turn()
    _LIVE[team_id] = w.context.messages
    events = [
        decode_event(encode_event(event), team_id, event.sequence)  # as a store gives them back
        for event in (
            PersistedEvent(team_id=team_id, sequence=n, event=m) for n, m in enumerate(log, 1)
        )
    ]
    return events, writer, other


def _reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise AssertionError("no run here")


@pytest.fixture
def agents() -> Iterator[tuple[ReactAgent[Any], ReactAgent[Any]]]:
    made: tuple[ReactAgent[Any], ReactAgent[Any]] = (
        ReactAgent(model=FunctionModel(_reply)),
        ReactAgent(model=FunctionModel(_reply)),
    )
    yield made
    for agent in made:
        agent.close()


def _restored(agent: ReactAgent[Any], events: list[PersistedEvent], member: ActorAddress) -> Any:
    own = [
        e.event
        for e in events
        if isinstance(e.event, EventMessage)
        and e.event.sender is not None
        and e.event.sender.agent_id == member.agent_id
    ]
    agent.restore_context(own)
    context = agent.context
    return context.messages, agent.usage_totals(), vars(context)["_system_hash"]


def test_restoring_from_the_checkpoint_at_any_event_gives_the_agent_of_the_whole_log(
    agents: tuple[ReactAgent[Any], ReactAgent[Any]],
) -> None:
    team_id = uuid4()
    events, writer, other = _conversation_log(team_id)
    whole = fold_log(events).checkpoint(team_id).payload
    compactions = 0
    for cut in range(1, len(events) + 1):
        prefix = events[:cut]
        checkpoint = fold_log(prefix).checkpoint(team_id)
        kept = checkpoint_of(checkpoint, team_id)
        for agent, member in zip(agents, (writer, other), strict=True):
            assert _restored(agent, kept, member) == _restored(agent, prefix, member), cut
        # Folding the kept events again keeps them as they are...
        assert CheckpointFold().extend(kept).checkpoint(team_id).payload == checkpoint.payload
        # ...and going on from them with the rest of the log ends where the whole log does.
        assert (
            CheckpointFold().extend(kept).extend(events[cut:]).checkpoint(team_id).payload == whole
        ), cut
        message = prefix[-1].event
        if isinstance(message, EventMessage) and isinstance(
            message.event, LlmContextCompactedEvent
        ):
            compactions += 1
            assert not any(
                isinstance(e.event, EventMessage)
                and isinstance(e.event.event, LlmContextCompactedEvent)
                for e in kept
            )
    assert compactions == 6


def test_a_compaction_keeps_only_the_messages_it_leaves() -> None:
    team_id = uuid4()
    events, writer, other = _conversation_log(team_id)
    live = _LIVE[team_id]
    kept = fold_log(events).kept

    def own(member: ActorAddress, kind: type) -> list[Any]:
        return [
            e.event.event
            for e in kept
            if isinstance(e.event, EventMessage)
            and e.event.sender is not None
            and e.event.sender.agent_id == member.agent_id
            and isinstance(e.event.event, kind)
        ]

    # What the writer's context holds and nothing more: the system prompt since the
    # clear, the summary, the turn the last compaction kept and the one after it, with
    # the tool events of their two calls.
    messages = [e.message for e in own(writer, LlmMessageEvent)]
    assert len(messages) == 10 and messages == live
    assert messages[1].parts[0].content == SUMMARY_PREFIX + "summary of 6"
    assert [e.tool_call_id for e in own(writer, ToolCallEvent)] == ["call-8", "call-9"]
    assert [e.content_hash for e in own(writer, LlmSystemPromptEvent)] == [
        system_prompt_hash([SystemPromptPart("You write again.")])
    ]
    # The other member never compacted: all of its turns are there.
    assert len(own(other, LlmMessageEvent)) == 2 * 6


def test_checkpoints_written_into_a_compacting_log_are_pure() -> None:
    team_id = uuid4()
    events, _writer, _other = _conversation_log(team_id)
    checkpointer = Checkpointer(team_id, every=5)
    log: list[PersistedEvent] = []
    for event in events:
        stored = event.model_copy(update={"sequence": len(log) + 1})
        log.append(stored)
        checkpoint = checkpointer.observe(stored)
        if checkpoint is not None:
            log.append(PersistedEvent(team_id=team_id, sequence=len(log) + 1, event=checkpoint))
    assert len(assert_checkpoints_pure(log, team_id)) >= 10


def test_a_member_fired_after_compacting_leaves_nothing_of_its_conversation() -> None:
    team_id = uuid4()
    events, writer, other = _conversation_log(team_id)
    stop = StopMessage().init(writer, team_id)
    fired = PersistedEvent(team_id=team_id, sequence=len(events) + 1, event=stop)
    kept = fold_log([*events, fired]).kept
    own = [e.event for e in kept if e.event.sender is not None and e.event.sender == writer]
    assert own == [stop]
    assert any(e.event.sender == other for e in kept if isinstance(e.event, EventMessage))
