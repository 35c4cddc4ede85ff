"""The fork half of the event store contract: a team's log copied up to a sequence.

:class:`ForkContract` is mixed into :class:`~akgentic.testing.EventStoreContract`, so
every store that runs the kit is checked through :func:`akgentic.team.fork.fork_team`
(over the store's ``copy_events`` and ``scan_raw_events`` when it is a
``StoreBase``, over the public protocol otherwise). The cases: a fork at the
first, a middle and the last event holds exactly the parent's events up to there,
with the parent's team and agent ids replaced by the fork's, while the parent is
unchanged; a fork of a fork; a fork of a team whose log grows meanwhile (a writer
thread appends throughout and is never refused); a tool call in flight at the
fork point closed by a return saying so; state snapshots newer than the fork point
left out; a sequence out of range, an unknown or half-deleted team and a log with a
gap refused with nothing created; a rewind; and, with ``supports_crash_test``, a
fork SIGKILLed at each of its steps leaving no team or a complete one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.core.messages.message import Message, UserMessage
from akgentic.core.messages.orchestrator import EventMessage
from akgentic.team.errors import (
    EventLogUnreadableError,
    ForkPointError,
    TeamNotFoundError,
    TeamStateError,
)
from akgentic.team.fork import INTERRUPTED_BY_FORK, fork_team, rewind_team
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, TeamStatus
from akgentic.team.store import EventStore
from akgentic.team.stores.codec import encode_event
from akgentic.testing.event_store_fixtures import (
    ContractMetadata,
    ContractState,
    contract_messages,
    contract_process,
    resolve_opener,
)
from akgentic.testing.event_store_ownership import contract_owner

__all__ = ["ForkContract", "fork_child"]

#: The steps the crash test kills a fork at (``copied`` steps are per page of 4).
CRASH_STEPS = ("read", "copied 4", "copied 8", "interruptions", "state agent-1", "record", "done")


def _log(team_id: UUID, extra: int = 0) -> list[Message]:
    """The kit's core messages (addresses with agent ids) and ``extra`` user messages."""
    messages = contract_messages(team_id)
    worker = messages[1].sender
    for number in range(extra):
        messages.append(UserMessage(content=f"more {number}").init(worker, team_id))
    return messages


def _tool_call(team_id: UUID, sender: Any) -> list[Message]:
    """A model response asking for a tool, with no return yet (a call in flight)."""
    from pydantic_ai.messages import ModelResponse, ToolCallPart

    from akgentic.llm.events import LlmMessageEvent, ToolCallEvent

    response = ModelResponse(
        parts=[ToolCallPart(tool_name="count", args={"n": 1}, tool_call_id="call-1")],
        run_id="run-1",
    )
    return [
        EventMessage(event=LlmMessageEvent(response)).init(sender, team_id),
        EventMessage(
            event=ToolCallEvent(
                run_id="run-1", tool_name="count", tool_call_id="call-1", arguments='{"n":1}'
            )
        ).init(sender, team_id),
    ]


def _stored(store: EventStore, messages: list[Message], team_id: UUID) -> datetime:
    """Store ``messages`` as the team's log; the timestamp given to the last one."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for sequence, message in enumerate(messages, start=1):
        store.save_event(
            PersistedEvent(
                team_id=team_id,
                sequence=sequence,
                event=message,
                timestamp=start + timedelta(seconds=sequence),
            )
        )
    return start + timedelta(seconds=len(messages))


def _parent(store: EventStore, extra: int = 0) -> tuple[UUID, list[Message]]:
    process = contract_process(metadata=ContractMetadata(tenant="fork")).with_status(
        TeamStatus.STOPPED
    )
    messages = _log(process.team_id, extra)
    _stored(store, messages, process.team_id)
    store.save_team(process)
    return process.team_id, messages


def _texts(store: EventStore, team_id: UUID) -> list[str]:
    return [encode_event(e) for e in store.load_events(team_id)]


def fork_child(opener: str, url: str, parent: str, at: str, child: str, stop_at: str) -> None:
    """Child process of the crash test: fork, announcing each step; block at ``stop_at``."""
    store = resolve_opener(opener)(url)
    hold = threading.Event()

    def step(name: str) -> None:
        print(f"step {name}", flush=True)
        if name == stop_at:
            print("held", flush=True)
            hold.wait()

    fork_team(store, UUID(parent), int(at), child_id=UUID(child), steps=step, page=4)
    print("finished", flush=True)
    hold.wait()


class ForkContract:
    """Fork cases of the event store kit (mixed into ``EventStoreContract``)."""

    supports_crash_test: ClassVar[bool] = True
    opener: ClassVar[str] = "akgentic.team.urls:open_event_store"

    def open_store(self, url: str) -> EventStore:  # pragma: no cover - EventStoreContract's
        raise NotImplementedError

    def _check_fork(
        self, store: EventStore, parent: UUID, child: UUID, messages: list[Message], at: int
    ) -> None:
        events = store.load_events(child)
        assert [e.sequence for e in events] == list(range(1, at + 1))
        assert [type(e.event) for e in events] == [type(m) for m in messages[:at]]
        texts = _texts(store, child)
        assert all(str(parent) not in text for text in texts)
        assert all(e.team_id == child for e in events)
        for event in events:
            assert event.event.team_id == child
            if event.event.sender is not None:
                assert event.event.sender.team_id == child
        record = store.load_team(child)
        assert record is not None
        assert record.status == TeamStatus.STOPPED
        assert record.lineage.parent_id == parent
        assert record.lineage.parent_sequence == at
        assert record.owner is None

    def test_a_fork_at_the_first_a_middle_and_the_last_event(self, store: EventStore) -> None:
        parent, messages = _parent(store, extra=5)
        before = _texts(store, parent)
        for at in (1, len(messages) // 2, len(messages)):
            result = fork_team(store, parent, at)
            assert result.at_sequence == at and result.events == at
            self._check_fork(store, parent, result.team_id, messages, at)
            forked = store.load_events(result.team_id)
            sender = forked[-1].event.sender
            assert sender is not None
            original = messages[at - 1].sender
            assert original is not None
            assert sender.agent_id != original.agent_id  # agents have ids of their own
            assert sender.name == original.name
        assert _texts(store, parent) == before  # the parent is untouched
        assert len({p.team_id for p in store.list_teams()}) == 4

    def test_the_same_agent_has_the_same_id_throughout_a_fork(self, store: EventStore) -> None:
        parent, messages = _parent(store, extra=3)
        child = fork_team(store, parent, len(messages)).team_id
        pairs = {
            (m.sender.agent_id, e.event.sender.agent_id)
            for m, e in zip(messages, store.load_events(child), strict=True)
            if m.sender is not None and e.event.sender is not None
        }
        old_ids = {old for old, _ in pairs}
        assert len(pairs) == len(old_ids)  # one new id per old id

    def test_a_fork_of_a_fork(self, store: EventStore) -> None:
        parent, messages = _parent(store, extra=6)
        first = fork_team(store, parent, 12, name="first").team_id
        second = fork_team(store, first, 7).team_id
        self._check_fork(store, first, second, messages, 7)
        record = store.load_team(second)
        assert record is not None and record.name == "first"
        assert all(str(parent) not in text for text in _texts(store, second))

    def test_a_fork_of_a_team_whose_log_grows_meanwhile(self, store: EventStore) -> None:
        parent, messages = _parent(store, extra=20)
        written = len(messages)
        errors: list[BaseException] = []
        done = threading.Event()
        appended = threading.Event()

        def writer() -> None:
            sequence = written
            try:
                while not done.is_set():
                    sequence += 1
                    message = UserMessage(content=f"live {sequence}").init(None, parent)
                    store.save_event(
                        PersistedEvent(team_id=parent, sequence=sequence, event=message)
                    )
                    appended.set()
            except BaseException as exc:  # reported by the test thread
                errors.append(exc)

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        try:
            assert appended.wait(30)
            at = store.get_max_sequence(parent)
            result = fork_team(store, parent, at)
        finally:
            done.set()
            thread.join(30)
        assert not errors
        assert store.get_max_sequence(parent) > at  # the parent kept growing
        events = store.load_events(result.team_id)
        assert [e.sequence for e in events] == list(range(1, at + 1))
        assert [type(e.event) for e in events[:written]] == [type(m) for m in messages]

    def test_a_call_in_flight_at_the_fork_point_is_closed_as_interrupted(
        self, store: EventStore
    ) -> None:
        process = contract_process().with_status(TeamStatus.STOPPED)
        team = process.team_id
        messages = _log(team)
        sender = messages[1].sender
        messages += _tool_call(team, sender)
        _stored(store, messages, team)
        store.save_team(process)
        result = fork_team(store, team, len(messages))
        assert result.events == len(messages) + 2
        assert result.interrupted == ["@Worker: count (call-1)"]
        closing = store.load_events(result.team_id)[len(messages) :]
        request = closing[0].event.event.message  # type: ignore[attr-defined]
        assert request.parts[0].tool_call_id == "call-1"
        assert request.parts[0].content == INTERRUPTED_BY_FORK.format(sequence=len(messages))
        returned = closing[1].event.event  # type: ignore[attr-defined]
        assert (returned.tool_call_id, returned.success) == ("call-1", False)
        sender = closing[0].event.sender
        assert sender is not None and sender.team_id == result.team_id
        # Forked before the call: nothing to close.
        early = fork_team(store, team, len(messages) - 2)
        assert early.interrupted == [] and early.events == len(messages) - 2

    def test_states_newer_than_the_fork_point_are_left_out(self, store: EventStore) -> None:
        process = contract_process().with_status(TeamStatus.STOPPED)
        team = process.team_id
        messages = _log(team)
        last = _stored(store, messages, team)
        store.save_team(process)
        worker = messages[1].sender
        assert worker is not None
        old = AgentStateSnapshot(
            team_id=team,
            agent_id=str(worker.agent_id),
            name="@Old",
            state=ContractState(counter=1),
            updated_at=last - timedelta(seconds=5),
        )
        new = AgentStateSnapshot(
            team_id=team,
            agent_id=str(uuid4()),
            name="@New",
            state=ContractState(counter=2),
            updated_at=last + timedelta(seconds=5),
        )
        store.save_agent_state(old)
        store.save_agent_state(new)
        result = fork_team(store, team, 11)
        states = store.load_agent_states(result.team_id)
        assert [s.name for s in states] == ["@Old"]
        assert states[0].team_id == result.team_id
        assert states[0].agent_id != old.agent_id
        assert any("@New" in note for note in result.notes)

    def test_bad_fork_points_and_parents_create_nothing(self, store: EventStore) -> None:
        parent, messages = _parent(store)
        before = store.stored_team_ids()
        for at in (0, -1, len(messages) + 1):
            with pytest.raises(ForkPointError, match="out of range"):
                fork_team(store, parent, at)
        with pytest.raises(TeamNotFoundError):
            fork_team(store, uuid4(), 1)
        half = uuid4()
        _stored(store, _log(half), half)  # events, no record: half-deleted
        with pytest.raises(TeamStateError, match="half-deleted"):
            fork_team(store, half, 2)
        gap = contract_process()
        for sequence, message in enumerate(_log(gap.team_id), start=1):
            if sequence != 4:
                store.save_event(
                    PersistedEvent(team_id=gap.team_id, sequence=sequence, event=message)
                )
        store.save_team(gap)
        with pytest.raises(EventLogUnreadableError, match="gap"):
            fork_team(store, gap.team_id, 6)
        assert store.stored_team_ids() == before | {half, gap.team_id}
        assert len(store.list_teams()) == 2

    def test_a_rewind_takes_the_name_and_abandons_the_original(self, store: EventStore) -> None:
        parent, _messages = _parent(store, extra=2)
        before = _texts(store, parent)
        result = rewind_team(store, parent, 5, owner=contract_owner())
        original = store.load_team(parent)
        rewound = store.load_team(result.team_id)
        assert original is not None and rewound is not None
        assert original.lineage.abandoned_for == result.team_id
        assert rewound.lineage.rewind and rewound.lineage.parent_id == parent
        assert rewound.name == original.name
        assert _texts(store, parent) == before  # nothing deleted
        assert not store.claim_held(parent)

    def test_a_fork_killed_at_any_step_leaves_no_team_or_a_complete_one(
        self, store: EventStore, store_url: str
    ) -> None:
        if not self.supports_crash_test:
            pytest.skip("store keeps nothing after its process dies")
        process = contract_process().with_status(TeamStatus.STOPPED)
        team = process.team_id
        messages = _log(team)
        messages += _tool_call(team, messages[1].sender)
        _stored(store, messages, team)
        store.save_team(process)
        store.save_agent_state(
            AgentStateSnapshot(
                team_id=team,
                agent_id="agent-1",
                name="@Worker",
                state=ContractState(counter=3),
                updated_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
        at = len(messages)
        for stop_at in CRASH_STEPS:
            child = uuid4()
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys; from akgentic.testing.event_store_fork import fork_child; "
                    "fork_child(*sys.argv[1:])",
                    self.opener,
                    store_url,
                    str(team),
                    str(at),
                    str(child),
                    stop_at,
                ],
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            try:
                assert proc.stdout is not None
                seen = []
                for line in proc.stdout:
                    seen.append(line.strip())
                    if line.strip() in ("held", "finished"):
                        break
                assert seen and seen[-1] in ("held", "finished"), (stop_at, seen)
            finally:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(30)
                if proc.stdout is not None:
                    proc.stdout.close()
            reopened = self.open_store(store_url)
            try:
                record = reopened.load_team(child)
                listed = {p.team_id for p in reopened.list_teams()}
                if stop_at == "done":
                    assert record is not None and child in listed
                    assert len(reopened.load_events(child)) == at + 2
                    assert len(reopened.load_agent_states(child)) == 1
                else:
                    assert record is None, json.dumps(seen)
                    assert child not in listed
            finally:
                reopened.close()
