"""A real LLM agent compacting its conversation: its checkpoint stops growing, resumes agree.

The agent talks to the scripted OpenAI-compatible server, compacts (sliding window)
after every second message, and its team is checkpointed after each compaction.
What the checkpoint keeps of the agent's conversation stays the same size however
many turns were compacted, and the team resumed from the checkpoint holds the same
model messages, system prompt and lifetime counters as the team resumed from the
whole log (the same log, copied without its checkpoints into another store).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pydantic_ai.messages import ModelMessage

from akgentic.agent import AgentConfig, BaseAgent, HumanProxy, StructuredOutput
from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorSystem, AgentCard, BaseConfig
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.core.utils.serializer import serialize
from akgentic.llm import CompactionConfig
from akgentic.llm.events import (
    LlmContextCompactedEvent,
    LlmMessageEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.llm.scripted_server import ScriptedLLMServer, structured
from akgentic.team import (
    EventStore,
    TeamCard,
    TeamCardMember,
    TeamManager,
    TeamRuntime,
    open_event_store,
)
from akgentic.team.checkpoint import checkpoint_of, fold_log, load_restore_point
from akgentic.team.messages import TeamCheckpoint
from akgentic.team.models import PersistedEvent
from akgentic.team.stores.codec import encode_event
from akgentic.testing.waiting import wait_until

ROUNDS = 8
FILLER = "filler " * 60  # each message adds about 400 characters to the conversation
CONVERSATION = (LlmMessageEvent, ToolCallEvent, ToolReturnEvent)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actors = ActorSystem()
    yield actors
    actors.shutdown(timeout=5)


def _manager(system: ActorSystem, url: str) -> tuple[TeamManager, EventStore]:
    store = open_event_store(url)
    return TeamManager(actor_system=system, event_store=store, checkpoint_every=0), store


def _card(server: ScriptedLLMServer) -> TeamCard:
    writer = AgentConfig(
        name="@Writer",
        role="Writer",
        # A key given in the config is stored masked and decodes to none, so the fold of
        # the stored log would differ from the live one in that field (not in the
        # conversation): the scripted server needs no key.
        model_cfg=server.model_config(api_key=None),
        compaction_cfg=CompactionConfig(strategy="sliding_window", keep_recent_messages=2),
    )
    return TeamCard(
        name="compacting",
        description="A writer that compacts, and a human",
        entry_point=TeamCardMember(
            card=AgentCard(
                description="The human",
                agent_class=HumanProxy,
                config=BaseConfig(name="@Human", role="Human"),
            )
        ),
        members=[
            TeamCardMember(
                card=AgentCard(description="Writes", agent_class=BaseAgent, config=writer)
            )
        ],
        message_types=[AgentMessage],
    )


def _writer_state(system: ActorSystem, runtime: TeamRuntime) -> tuple[Any, ...]:
    """The writer's model messages, lifetime counters and last system prompt's hash."""
    agent = _writer(system, runtime)
    react = agent.react_agent
    context = react.context
    return context.messages, react.usage_totals(), vars(context)["_system_hash"]


def _writer(system: ActorSystem, runtime: TeamRuntime) -> BaseAgent:
    return system.proxy_ask(runtime.resolve("@Writer"), BaseAgent, 30)


def _kept_of(store: EventStore, team_id: UUID, sequence: int) -> list[PersistedEvent]:
    (stored,) = [e for e in store.load_events(team_id) if e.sequence == sequence]
    assert isinstance(stored.event, TeamCheckpoint)
    return checkpoint_of(stored.event, team_id)


def _conversation(kept: list[PersistedEvent], writer: UUID) -> list[PersistedEvent]:
    return [
        e
        for e in kept
        if isinstance(e.event, EventMessage)
        and e.event.sender is not None
        and e.event.sender.agent_id == writer
        and isinstance(e.event.event, CONVERSATION)
    ]


def _checkpoints_pure_by_value(events: list[PersistedEvent], team_id: UUID) -> int:
    """Each checkpoint holds the events the fold of the stored log before it keeps.

    Compared as decoded events, not as text: a response's ``RequestUsage`` is written
    from the live object (``"audio_seconds":0``) and reads back as a float, which the
    fold of the stored log writes as ``0.0``. That holds with or without compactions.
    """
    found = 0
    for event in events:
        message = event.event
        if isinstance(message, TeamCheckpoint):
            rebuilt = fold_log(e for e in events if e.sequence < event.sequence)
            again = checkpoint_of(rebuilt.checkpoint(team_id), team_id)
            assert checkpoint_of(message, team_id) == again, event.sequence
            found += 1
    return found


def _stored(messages: list[ModelMessage]) -> Any:
    """``messages`` as the log stores them."""
    return serialize(messages)


def _served(server: ScriptedLLMServer, count: int) -> bool:
    return server.served >= count


def _compacted(store: EventStore, team_id: UUID, count: int) -> bool:
    """Whether ``count`` compactions are in the log."""
    found = sum(
        isinstance(e.event, EventMessage) and isinstance(e.event.event, LlmContextCompactedEvent)
        for e in store.load_events(team_id)
    )
    return found == count


def _kinds(kept: list[PersistedEvent]) -> Counter[str]:
    return Counter(type(getattr(e.event, "event", e.event)).__name__ for e in kept)


def test_a_compacting_agent_checkpoint_stops_growing_and_resumes_as_the_whole_log_does(
    system: ActorSystem,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    llm_server.fallback = structured(StructuredOutput())
    manager, store = _manager(system, f"sqlite:///{tmp_path}/log.db")
    runtime = manager.create_team(_card(llm_server))
    team_id = runtime.id
    writer = runtime.resolve("@Writer").agent_id
    sent = 0
    sizes: list[tuple[int, int]] = []  # (events, bytes) of the writer's kept conversation
    kinds: list[Counter[str]] = []
    for _round in range(ROUNDS):
        for _ in range(2):
            sent += 1
            runtime.send(f"Note {sent}: {FILLER}")
            wait_until(partial(_served, llm_server, sent), timeout=30)
            assert runtime.wait_idle(timeout=30)
        report = _writer(system, runtime).compact()
        assert report.startswith("Compacted: replaced"), report
        persistence = manager.get_persistence(team_id)
        assert persistence is not None
        # The compaction reaches the log through the orchestrator: checkpoint after it.
        wait_until(partial(_compacted, store, team_id, _round + 1), timeout=30)
        sequence = manager.checkpoint_team(team_id)
        assert sequence is not None
        persistence.flush(10)
        kept = _kept_of(store, team_id, sequence)
        conversation = _conversation(kept, writer)
        sizes.append((len(conversation), sum(len(encode_event(e)) for e in conversation)))
        kinds.append(_kinds(kept))
    live = _writer_state(system, runtime)
    manager.stop_team(team_id)

    # (a) After every compaction the writer's kept conversation is the same four events
    # (its system prompt, the summary, the last request and response; only the note
    # numbers' digits change their size), where the whole conversation grew by two
    # turns a round. The only kept events that still grow are the usage events, one
    # per model response.
    assert {count for count, _size in sizes} == {4}, sizes
    assert max(size for _c, size in sizes) - min(size for _c, size in sizes) <= ROUNDS, sizes
    growth = kinds[-1] - kinds[0]
    assert growth == Counter({LlmUsageEvent.__name__: 2 * (ROUNDS - 1)}), growth
    events = store.load_events(team_id)
    assert _checkpoints_pure_by_value(events, team_id) == ROUNDS

    # (b) Resumed from its newest checkpoint...
    point = load_restore_point(store, team_id)
    assert point.checkpoint == sequence and len(point.events) < len(events) // 2
    from_checkpoint = manager.resume_team(team_id)
    restored = _writer_state(system, from_checkpoint)
    manager.stop_team(team_id)
    # ...and from the whole log, copied without its checkpoints into another store.
    whole, plain = _manager(system, f"sqlite:///{tmp_path}/plain.db")
    process = store.load_team(team_id)
    assert process is not None
    plain.save_team(process)
    for snapshot in store.load_agent_states(team_id):
        plain.save_agent_state(snapshot)
    for event in events:
        if not isinstance(event.event, TeamCheckpoint):
            plain.save_event(event)
    assert load_restore_point(plain, team_id).checkpoint is None
    from_log = whole.resume_team(team_id)
    replayed = _writer_state(system, from_log)
    whole.stop_all()
    manager.stop_all()
    plain.close()
    store.close()

    assert restored == replayed
    # The history the agent had when it stopped, as stored: a response's
    # provider_details holds a datetime live, and its text once read back.
    assert _stored(restored[0]) == _stored(live[0])
    assert restored[1] == live[1] and live[1][0] == 2 * ROUNDS  # runs, tokens in and out
    assert len(restored[0]) < 2 * 2 * 2  # a few turns, not the sixteen it was told
