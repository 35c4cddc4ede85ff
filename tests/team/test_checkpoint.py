"""Checkpoints of a real team: written every K events, pure, and what a resume starts from."""

from __future__ import annotations

import importlib
import logging
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core import ActorSystem, BaseConfig
from akgentic.core.agent import Akgent
from akgentic.core.messages import ClosedNotification
from akgentic.core.messages.orchestrator import EventMessage, StartMessage, StopMessage
from akgentic.core.messages.types import TeamStoppingEvent
from akgentic.core.proxy import ProxyWrapper
from akgentic.llm.budget_events import BudgetWarned
from akgentic.llm.events import LlmContextClearedEvent, LlmSystemPromptEvent, LlmUsageEvent
from akgentic.team import EventStore, SqliteEventStore, TeamCard, TeamManager, TeamRuntime
from akgentic.team.checkpoint import (
    Checkpointer,
    CheckpointFold,
    fold_log,
    load_restore_point,
)
from akgentic.team.messages import TeamCheckpoint
from akgentic.team.models import PersistedEvent
from akgentic.team.subscribers.persistence import PersistenceSubscriber
from akgentic.testing.event_store_checkpoint import assert_checkpoints_pure, stream_messages

CardFactory = Callable[..., TeamCard]
Member = Callable[..., dict[str, Any]]


@pytest.fixture
def every5(actor_system: ActorSystem, any_store: EventStore) -> Iterator[TeamManager]:
    """A manager on each built-in store that checkpoints every 5 events."""
    manager = TeamManager(actor_system, any_store, checkpoint_every=5)
    yield manager
    manager.stop_all()


def call(runtime: TeamRuntime, name: str, method: str) -> Any:
    return getattr(ProxyWrapper(runtime.resolve(name), timeout=10), method)()


def checkpoints(store: EventStore, team_id: UUID) -> list[int]:
    return [e.sequence for e in store.load_events(team_id) if isinstance(e.event, TeamCheckpoint)]


def test_resume_from_a_checkpoint_brings_back_what_a_whole_replay_does(
    every5: TeamManager,
    team_card: CardFactory,
    member: Member,
    actor_system: ActorSystem,
    wait_for: Callable[..., None],
) -> None:
    store = every5.event_store
    runtime = every5.create_team(
        team_card(members=[member("Echo", "@Echo"), member("Echo", "@Old")])
    )
    lead: Akgent[Any, Any] = actor_system.proxy_ask(runtime.resolve("@Echo"), Akgent, 10)
    lead.createActor(
        importlib.import_module("team_test_agents").Echo,
        config=BaseConfig(name="@Hired", role="Helper"),
    )
    runtime.send_to("@Old", "soon gone")
    assert runtime.wait_idle(10)
    ProxyWrapper(runtime.resolve("@Old"), timeout=10).stop()
    wait_for(lambda: {m.name for m in runtime.members} == {"@Entry", "@Echo", "@Hired"})
    texts = [f"text {n}" for n in range(12)]
    for text in texts:
        runtime.send_to("@Echo", text)
    runtime.send_to("@Hired", "welcome")
    assert runtime.wait_idle(10)
    every5.stop_team(runtime.id)

    events = store.load_events(runtime.id)
    found = assert_checkpoints_pure(events, runtime.id)
    assert len(found) >= 5
    point = load_restore_point(store, runtime.id)
    assert point.checkpoint == found[-1]
    assert len(point.events) < len(events) // 2

    resumed = every5.resume_team(runtime.id)
    assert sorted(m.name for m in resumed.members) == ["@Echo", "@Entry", "@Hired"]
    assert call(resumed, "@Echo", "restored_texts") == texts
    assert call(resumed, "@Hired", "restored_texts") == ["welcome"]
    resumed.send_to("@Echo", "after")
    assert resumed.wait_idle(10)
    every5.stop_team(runtime.id)
    again = every5.resume_team(runtime.id)
    assert call(again, "@Echo", "restored_texts") == [*texts, "after"]
    every5.stop_team(runtime.id)
    # Purity holds across resumes: the fold went on from a checkpoint's kept events.
    assert_checkpoints_pure(store.load_events(runtime.id), runtime.id)


def test_first_resume_of_a_long_log_without_checkpoints_writes_one(
    actor_system: ActorSystem, any_store: EventStore, team_card: CardFactory
) -> None:
    plain = TeamManager(actor_system, any_store, checkpoint_every=0)
    runtime = plain.create_team(team_card())
    for number in range(5):
        runtime.send(f"m{number}")
    assert runtime.wait_idle(10)
    plain.stop_team(runtime.id)
    assert checkpoints(any_store, runtime.id) == []
    length = any_store.get_max_sequence(runtime.id)

    checkpointing = TeamManager(actor_system, any_store, checkpoint_every=10)
    checkpointing.resume_team(runtime.id)
    persistence = checkpointing.get_persistence(runtime.id)
    assert persistence is not None
    persistence.flush(10)
    assert checkpoints(any_store, runtime.id) == [length + 1]
    checkpointing.stop_team(runtime.id)
    assert load_restore_point(any_store, runtime.id).checkpoint == length + 1


def test_checkpoint_team_writes_one_for_a_running_and_for_a_stopped_team(
    actor_system: ActorSystem, any_store: EventStore, team_card: CardFactory
) -> None:
    manager = TeamManager(actor_system, any_store, checkpoint_every=0)
    runtime = manager.create_team(team_card())
    runtime.send("hello")
    assert runtime.wait_idle(10)
    running = manager.checkpoint_team(runtime.id)
    assert running is not None
    assert manager.checkpoint_team(runtime.id) is None  # nothing new since
    manager.stop_team(runtime.id)
    stopped = manager.checkpoint_team(runtime.id)
    assert stopped is not None and stopped > running
    assert checkpoints(any_store, runtime.id) == [running, stopped]
    assert_checkpoints_pure(any_store.load_events(runtime.id), runtime.id)
    assert not any_store.claim_held(runtime.id)


def test_damaged_checkpoint_in_sqlite_is_skipped_with_a_warning_and_the_team_resumes(
    actor_system: ActorSystem,
    tmp_path: Path,
    team_card: CardFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = tmp_path / "damaged.db"
    store = SqliteEventStore(path)
    manager = TeamManager(actor_system, store, checkpoint_every=4)
    try:
        runtime = manager.create_team(team_card())
        texts = [f"t{n}" for n in range(6)]
        for text in texts:
            runtime.send_to("@Echo", text)
        assert runtime.wait_idle(10)
        manager.stop_team(runtime.id)
        found = checkpoints(store, runtime.id)
        assert len(found) >= 2
        with sqlite3.connect(path) as raw:
            (payload,) = raw.execute(
                "SELECT payload FROM events WHERE team_id = ? AND sequence = ?",
                (str(runtime.id), found[-1]),
            ).fetchone()
            damaged = payload.replace("@Echo", "@Exho", 1)
            assert damaged != payload
            raw.execute(
                "UPDATE events SET payload = ? WHERE team_id = ? AND sequence = ?",
                (damaged, str(runtime.id), found[-1]),
            )
        with caplog.at_level(logging.WARNING, logger="akgentic.team.checkpoint"):
            point = load_restore_point(store, runtime.id)
            resumed = manager.resume_team(runtime.id)
        assert point.checkpoint == found[-2]
        assert any(
            f"checkpoint at event {found[-1]} skipped" in r.getMessage() for r in caplog.records
        )
        assert call(resumed, "@Echo", "restored_texts") == texts
    finally:
        manager.stop_all()
        store.close()


# -- the fold, unit by unit ---------------------------------------------------


def _events(team_id: UUID, messages: list[Any]) -> list[PersistedEvent]:
    return [
        PersistedEvent(team_id=team_id, sequence=n, event=m)
        for n, m in enumerate(messages, start=1)
    ]


def _starts(team_id: UUID) -> tuple[list[Any], Any, Any]:
    stream = stream_messages(team_id, 0)
    orchestrator_start, worker_start, helper_start = list(stream)
    return (
        [orchestrator_start, worker_start, helper_start],
        worker_start.sender,
        helper_start.sender,
    )


def test_fold_keeps_budget_events_of_a_fired_member_and_drops_the_rest_of_its_history() -> None:
    team_id = uuid4()
    starts, _worker, helper = _starts(team_id)
    spent = EventMessage(event=BudgetWarned(limit="usd", used=1.6, cap=2.0)).init(helper, team_id)
    own = EventMessage(event=ClosedNotification(message_id=uuid4())).init(helper, team_id)
    stop = StopMessage().init(helper, team_id)
    fold = fold_log(_events(team_id, [*starts, spent, own, stop]))
    kept = [e.event for e in fold.kept]
    assert spent in kept and own not in kept and starts[2] not in kept and stop in kept


def test_fold_leaves_a_member_restarted_under_a_stopped_id_dead() -> None:
    team_id = uuid4()
    starts, _worker, helper = _starts(team_id)
    again = StartMessage(config=BaseConfig(name="@Helper", role="Helper")).init(helper, team_id)
    events = _events(team_id, [*starts, StopMessage().init(helper, team_id), again])
    kept = [e.event for e in fold_log(events).kept]
    assert again not in kept


def test_fold_drops_a_cleared_conversation_and_team_stopping_events() -> None:
    team_id = uuid4()
    starts, worker, _helper = _starts(team_id)
    prompt = EventMessage(event=LlmSystemPromptEvent(run_id="r", parts=(), content_hash="h")).init(
        worker, team_id
    )
    usage = EventMessage(
        event=LlmUsageEvent(
            run_id="r", model_name="m", provider_name="p", input_tokens=3, output_tokens=4
        )
    ).init(worker, team_id)
    cleared = EventMessage(event=LlmContextClearedEvent(run_id="r", cleared_message_count=2)).init(
        worker, team_id
    )
    stopping = EventMessage(event=TeamStoppingEvent()).init(starts[0].sender, team_id)
    kept = [
        e.event
        for e in fold_log(_events(team_id, [*starts, prompt, usage, cleared, stopping])).kept
    ]
    assert prompt not in kept and stopping not in kept
    assert usage in kept and cleared in kept


def test_checkpointer_offers_a_checkpoint_every_k_events_and_not_after_itself() -> None:
    team_id = uuid4()
    checkpointer = Checkpointer(team_id, CheckpointFold(), every=3)
    offered = []
    for event in _events(team_id, list(stream_messages(team_id, 4))):
        made = checkpointer.observe(event)
        if made is not None:
            offered.append(event.sequence)
            checkpointer.observe(
                PersistedEvent(team_id=team_id, sequence=event.sequence, event=made)
            )
    assert offered == [3, 6, 9, 12, 15]
    assert checkpointer.written == 5
    with pytest.raises(ValueError, match="every"):
        Checkpointer(team_id, every=-1)


class _DecodedOnly:
    """A store without ``scan_raw_events``: the restore point reads decoded pages."""

    def __init__(self, inner: EventStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "scan_raw_events":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_restore_point_is_the_same_from_decoded_pages_and_from_raw_rows(
    any_store: EventStore,
) -> None:
    team_id = uuid4()
    persistence = PersistenceSubscriber(team_id, any_store)
    persistence.checkpointer = Checkpointer(team_id, every=10)
    for message in stream_messages(team_id, 40):
        persistence.on_message(message)
    persistence.close()
    plain: Any = _DecodedOnly(any_store)
    assert not hasattr(plain, "scan_raw_events")
    raw = load_restore_point(any_store, team_id, page_size=4)
    decoded = load_restore_point(plain, team_id, page_size=4)
    assert raw.checkpoint == decoded.checkpoint is not None
    assert [e.sequence for e in raw.events] == [e.sequence for e in decoded.events]
    assert raw.fold.checkpoint(team_id).payload == decoded.fold.checkpoint(team_id).payload
    assert raw.read <= 12 and decoded.read <= 12
