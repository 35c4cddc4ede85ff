"""The checkpoint half of the event store contract (:mod:`akgentic.team.checkpoint`).

:class:`CheckpointContract` is mixed into :class:`~akgentic.testing.EventStoreContract`,
so every store that runs the kit stores and reads checkpoints. The cases: the
checkpoints a team's persistence writes into its log each equal the fold of the
events before them, rebuilt from the stored log (purity); a restore point reads
the newest checkpoint and the events after it, and not the whole log, and gives
what the whole log gives; a checkpoint failing its checksum is skipped with a
warning for an older one, or for the whole log; a fork before a checkpoint never
sees it, and a fork after one leaves the copy unused; a checkpoint written for a
stopped team under its claim; and, with ``supports_crash_test``, a writer
SIGKILLed while it writes checkpoints losing no acknowledged event, the next
restore point still sound.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.core.actor_address import ActorAddressProxy
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages import ClosedNotification, SentMessage, UserMessage
from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import EventMessage, StartMessage, StopMessage
from akgentic.team.checkpoint import (
    Checkpointer,
    CheckpointFold,
    fold_log,
    load_restore_point,
    restore_messages,
    verify,
    write_checkpoint,
)
from akgentic.team.fork import fork_team
from akgentic.team.messages import TeamCheckpoint
from akgentic.team.models import PersistedEvent, TeamStatus
from akgentic.team.restorer import live_starts
from akgentic.team.store import EventStore
from akgentic.team.subscribers.persistence import PersistenceSubscriber
from akgentic.testing.event_store_fixtures import (
    ContractMetadata,
    contract_process,
    resolve_opener,
)
from akgentic.testing.event_store_ownership import contract_owner

__all__ = [
    "CheckpointContract",
    "assert_checkpoints_pure",
    "checkpoint_child",
    "checkpoint_messages",
    "stream_messages",
    "team_address",
]

_ORCHESTRATOR = "akgentic.core.orchestrator.Orchestrator"


def team_address(
    team_id: UUID, name: str, actor_type: str = "akgentic.core.agent.Akgent"
) -> ActorAddressProxy:
    """A stored actor address of a member ``name`` of ``team_id`` (a fresh agent id)."""
    return ActorAddressProxy(
        {
            "__actor_address__": True,
            "__actor_type__": actor_type,
            "agent_id": str(uuid4()),
            "name": name,
            "role": name.strip("@"),
            "team_id": str(team_id),
            "squad_id": "",
            "is_user_proxy": False,
        }
    )


def stream_messages(
    team_id: UUID, rounds: int | None = None, *, fire_at: int = 5
) -> Iterator[Message]:
    """A team's stream: starts, then ``rounds`` turns (``None``: forever) of telemetry and events.

    A ``@Helper`` member is fired (its ``StopMessage``) at round ``fire_at``,
    so the fold drops its history from then on.
    """
    orchestrator = team_address(team_id, "@Orchestrator", _ORCHESTRATOR)
    worker = team_address(team_id, "@Worker")
    helper = team_address(team_id, "@Helper")
    yield StartMessage(config=BaseConfig(name="@Orchestrator", role="Orchestrator")).init(
        orchestrator, team_id
    )
    for member in (worker, helper):
        config = BaseConfig(name=member.name, role=member.role)
        yield StartMessage(config=config, parent=orchestrator).init(member, team_id)
    for number in itertools.count() if rounds is None else range(rounds):
        question = UserMessage(content=f"question {number}").init(orchestrator, team_id)
        yield SentMessage(message=question, recipient=worker).init(worker, team_id)
        closed = ClosedNotification(message_id=question.id)
        yield EventMessage(event=closed).init(worker, team_id)
        if number < fire_at:
            yield EventMessage(event=closed).init(helper, team_id)
        elif number == fire_at:
            yield StopMessage().init(helper, team_id)


def checkpoint_messages(team_id: UUID, rounds: int) -> list[Message]:
    """:func:`stream_messages` of ``rounds`` turns, the helper fired half way."""
    return list(stream_messages(team_id, rounds, fire_at=rounds // 2))


def _persist(
    store: EventStore, team_id: UUID, messages: list[Message], every: int
) -> PersistenceSubscriber:
    persistence = PersistenceSubscriber(team_id, store)
    persistence.checkpointer = Checkpointer(team_id, every=every)
    for message in messages:
        persistence.on_message(message)
    persistence.close()
    return persistence


def assert_checkpoints_pure(events: list[PersistedEvent], team_id: UUID) -> list[int]:
    """Every checkpoint of ``events`` verifies and equals the fold of the events before it."""
    found: list[int] = []
    fold = CheckpointFold()
    for event in events:
        message = event.event
        if isinstance(message, TeamCheckpoint):
            assert verify(message, team_id) is None
            assert message.upto == event.sequence - 1
            rebuilt = fold_log(e for e in events if e.sequence < event.sequence)
            assert rebuilt.checkpoint(team_id).payload == message.payload
            assert fold.checkpoint(team_id).checksum == message.checksum
            found.append(event.sequence)
        fold.add(event)
    return found


def _live_names(events: list[PersistedEvent]) -> list[str]:
    starts = live_starts(restore_messages(events))
    return sorted(s.config.name for s in starts)


def checkpoint_child(opener: str, url: str, team_id: str) -> None:
    """Child process of the crash test: a team writing checkpoints, printing acknowledged events."""
    store = resolve_opener(opener)(url)
    team = UUID(team_id)
    store.save_team(contract_process(team, metadata=ContractMetadata(tenant="checkpoint")))
    persistence = PersistenceSubscriber(team, store)
    persistence.checkpointer = Checkpointer(team, every=4)
    for number, message in enumerate(stream_messages(team), start=1):
        persistence.on_message(message)
        if number % 5 == 0:
            persistence.flush()
            print(persistence.durable_sequence, flush=True)


class CheckpointContract:
    """Checkpoint tests of the event store contract (mixed into ``EventStoreContract``)."""

    opener: ClassVar[str]
    supports_crash_test: ClassVar[bool]

    def open_store(self, url: str) -> EventStore:
        raise NotImplementedError

    def _team(self, store: EventStore, rounds: int = 20, every: int = 7) -> UUID:
        process = contract_process(metadata=ContractMetadata(tenant="checkpoint"))
        store.save_team(process.with_status(TeamStatus.STOPPED))
        _persist(store, process.team_id, checkpoint_messages(process.team_id, rounds), every)
        return process.team_id

    def test_each_stored_checkpoint_is_the_fold_of_the_events_before_it(
        self, store: EventStore
    ) -> None:
        team_id = self._team(store)
        events = store.load_events(team_id)
        found = assert_checkpoints_pure(events, team_id)
        assert len(found) >= 5
        sequences = [e.sequence for e in events]
        assert sequences == list(range(1, len(events) + 1))

    def test_restore_point_reads_the_newest_checkpoint_and_the_events_after_it(
        self, store: EventStore
    ) -> None:
        team_id = self._team(store, rounds=30, every=10)
        events = store.load_events(team_id)
        newest = max(e.sequence for e in events if isinstance(e.event, TeamCheckpoint))
        point = load_restore_point(store, team_id, page_size=8)
        whole = load_restore_point(store, team_id, use_checkpoints=False)
        assert point.checkpoint == newest
        assert whole.checkpoint is None
        assert point.read < len(events) // 2
        assert [e.sequence for e in point.events if e.sequence > newest] == [
            e.sequence for e in events if e.sequence > newest
        ]
        assert point.fold.checkpoint(team_id).payload == whole.fold.checkpoint(team_id).payload
        assert (
            _live_names(point.events) == _live_names(whole.events) == ["@Orchestrator", "@Worker"]
        )
        assert not any(isinstance(e.event, TeamCheckpoint) for e in point.events)

    def test_checkpoint_failing_its_checksum_is_skipped_for_an_older_one(
        self, store: EventStore, caplog: pytest.LogCaptureFixture
    ) -> None:
        team_id = self._team(store, rounds=10, every=5)
        events = store.load_events(team_id)
        good = [e.sequence for e in events if isinstance(e.event, TeamCheckpoint)]
        last = events[-1].sequence
        bad = fold_log(events).checkpoint(team_id)
        damaged = bad.model_copy(update={"payload": bad.payload.replace("Worker", "Wxrker", 1)})
        store.save_event(PersistedEvent(team_id=team_id, sequence=last + 1, event=damaged))
        with caplog.at_level(logging.WARNING, logger="akgentic.team.checkpoint"):
            point = load_restore_point(store, team_id)
        assert point.checkpoint == good[-1]
        assert len(point.skipped) == 1 and "checksum" in point.skipped[0]
        assert any("checksum" in r.getMessage() for r in caplog.records)
        whole = load_restore_point(store, team_id, use_checkpoints=False)
        assert point.fold.checkpoint(team_id).payload == whole.fold.checkpoint(team_id).payload

    def test_log_whose_checkpoints_all_fail_is_replayed_whole(self, store: EventStore) -> None:
        team_id = contract_process().team_id
        messages = checkpoint_messages(team_id, 6)
        prefix = [
            PersistedEvent(team_id=team_id, sequence=n, event=m)
            for n, m in enumerate(messages[:4], start=1)
        ]
        bad = fold_log(prefix).checkpoint(team_id).model_copy(update={"checksum": "0" * 64})
        stream = [*messages[:4], bad, *messages[4:]]
        for number, message in enumerate(stream, start=1):
            store.save_event(PersistedEvent(team_id=team_id, sequence=number, event=message))
        point = load_restore_point(store, team_id)
        assert point.checkpoint is None
        assert len(point.skipped) == 1
        assert len(point.events) == len(messages)
        assert _live_names(point.events) == ["@Orchestrator", "@Worker"]

    def test_fork_before_a_checkpoint_never_uses_it(self, store: EventStore) -> None:
        parent = self._team(store, rounds=12, every=9)
        events = store.load_events(parent)
        first = min(e.sequence for e in events if isinstance(e.event, TeamCheckpoint))
        result = fork_team(store, parent, first - 1)
        point = load_restore_point(store, result.team_id)
        assert point.checkpoint is None and point.skipped == []
        assert len(point.events) == first - 1
        prefix = [e for e in events if e.sequence < first]
        assert _live_names(point.events) == _live_names(prefix)
        assert point.fold.since == first - 1

    def test_fork_after_a_checkpoint_leaves_the_copy_unused(self, store: EventStore) -> None:
        parent = self._team(store, rounds=12, every=9)
        events = store.load_events(parent)
        at = max(e.sequence for e in events if isinstance(e.event, TeamCheckpoint)) + 2
        result = fork_team(store, parent, at)
        point = load_restore_point(store, result.team_id)
        assert point.checkpoint is None
        assert point.skipped and "another team" in point.skipped[0]
        prefix = [e for e in events if e.sequence <= at]
        assert _live_names(point.events) == _live_names(prefix)
        assert len(point.fold.kept) == len(fold_log(prefix).kept)
        sequence = write_checkpoint(store, result.team_id)
        assert sequence == at + 1
        assert load_restore_point(store, result.team_id).checkpoint == sequence

    def test_checkpoint_written_for_a_stopped_team_under_its_claim(self, store: EventStore) -> None:
        team_id = self._team(store, rounds=8, every=0)
        events = store.load_events(team_id)
        assert not any(isinstance(e.event, TeamCheckpoint) for e in events)
        claimed = store.claim_team(team_id, contract_owner())
        try:
            sequence = write_checkpoint(store, team_id, epoch=claimed.epoch)
            assert write_checkpoint(store, team_id, epoch=claimed.epoch) is None
        finally:
            store.release_team(team_id)
        assert sequence == len(events) + 1
        assert assert_checkpoints_pure(store.load_events(team_id), team_id) == [sequence]
        assert load_restore_point(store, team_id).checkpoint == sequence

    def test_sigkill_while_writing_checkpoints_loses_no_acknowledged_event(
        self, store_url: str
    ) -> None:
        if not self.supports_crash_test:
            pytest.skip("this store keeps nothing once its process is gone")
        team_id = uuid4()
        code = (
            "from akgentic.testing.event_store_checkpoint import checkpoint_child\n"
            f"checkpoint_child({self.opener!r}, {store_url!r}, {str(team_id)!r})\n"
        )
        acknowledged: list[int] = []
        with subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as child:
            try:
                assert child.stdout is not None
                for line in child.stdout:
                    acknowledged.append(int(line))
                    if len(acknowledged) >= 25:
                        break
                os.kill(child.pid, signal.SIGKILL)
                rest = child.stdout.read()
                acknowledged.extend(int(line) for line in rest.splitlines() if line.strip())
                child.wait(timeout=60)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=60)
            stderr = child.stderr.read() if child.stderr is not None else ""
        assert len(acknowledged) >= 25, f"child stopped early: {stderr}"
        reopened = self.open_store(store_url)
        try:
            events = reopened.load_events(team_id)
            sequences = [e.sequence for e in events]
            assert sequences == list(range(1, len(sequences) + 1))
            assert max(acknowledged) <= len(sequences)
            assert len(assert_checkpoints_pure(events, team_id)) >= 5
            point = load_restore_point(reopened, team_id)
            assert point.checkpoint is not None
            whole = load_restore_point(reopened, team_id, use_checkpoints=False)
            assert point.fold.checkpoint(team_id).payload == whole.fold.checkpoint(team_id).payload
            claimed = reopened.claim_team(team_id, contract_owner())
            try:
                assert write_checkpoint(reopened, team_id, epoch=claimed.epoch) in (
                    None,
                    len(sequences) + 1,
                )
            finally:
                reopened.release_team(team_id)
        finally:
            reopened.close()
