"""PoisonContract: hostile text and refused events never stop a team's persistence.

Part of :class:`~akgentic.testing.event_store_contract.EventStoreContract`:

* text that is not UTF-8 (a file name decoded with ``surrogateescape``, a lone
  surrogate) is stored, in events, agent states and team records, with each
  lone surrogate written as its escape (``\\xXX`` for an undecodable byte,
  ``\\uXXXX`` otherwise), and the log goes on after it;
* one event the store refuses is quarantined by the persistence subscriber:
  an ``EventQuarantined`` record holds its sequence and its text, the events
  after it are written, in both write modes, and an error line says so.

The refused event is made by a thin wrapper that refuses one marked event
(with the store's own error type) and hands everything else to the store
under test, so every backend is checked for what it writes in its place.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core.messages import UserMessage
from akgentic.team.errors import DuplicateEventError, EventStoreError
from akgentic.team.messages import EventQuarantined
from akgentic.team.models import AgentStateSnapshot, PersistedEvent
from akgentic.team.store import BatchEventStore, EventStore, RawRecordStore
from akgentic.team.stores.check import check_store
from akgentic.team.stores.codec import encode_event
from akgentic.team.subscribers.persistence import PersistenceStoppedError, PersistenceSubscriber
from akgentic.testing.event_store_fixtures import (
    ContractMetadata,
    ContractState,
    contract_event,
    contract_process,
)

__all__ = ["NOT_UTF8_NAME", "POISON_MARK", "PoisonContract", "RefusingStore"]

#: A file name as ``os.listdir`` returns it when its bytes are not UTF-8.
NOT_UTF8_NAME = os.fsdecode(b"r\xe9sum\xe9-\xff.txt")
#: What it reads as once stored.
NOT_UTF8_STORED = "r\\xe9sum\\xe9-\\xff.txt"
#: Text that makes :class:`RefusingStore` refuse the event holding it (at any depth).
POISON_MARK = "<refuse this event>"


class RefusingStore:
    """The store under test, except that it refuses every event carrying :data:`POISON_MARK`."""

    def __init__(self, store: EventStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:  # every other method: the store's own
        return getattr(self.store, name)

    def _check(self, event: PersistedEvent) -> None:
        # Anywhere in the event (a user message's text is nested in its
        # SentMessage), but not in the record standing in for a refused one,
        # which quotes it: the refusal is of that event, as a store's is.
        if isinstance(event.event, EventQuarantined):
            return
        if POISON_MARK in encode_event(event):
            raise EventStoreError(f"event {event.sequence} refused: it carries the poison mark")

    def save_event(self, event: PersistedEvent, **fence: Any) -> None:
        self._check(event)
        self.store.save_event(event, **fence)

    def save_events(self, events: Sequence[PersistedEvent], **fence: Any) -> None:
        for event in events:
            self._check(event)
        assert isinstance(self.store, BatchEventStore)
        self.store.save_events(events, **fence)

    def save_agent_state(self, snapshot: AgentStateSnapshot, **fence: Any) -> None:
        self.store.save_agent_state(snapshot, **fence)


def _message(team_id: UUID, content: str) -> UserMessage:
    return UserMessage(content=content).init(None, team_id)


class PoisonContract:
    """Hostile text and refused events (mixed into ``EventStoreContract``)."""

    def test_text_that_is_not_utf8_is_stored_escaped_and_the_log_goes_on(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        metadata = ContractMetadata(tenant="t", notes=f"from {NOT_UTF8_NAME}")
        store.save_team(contract_process(team_id, metadata=metadata))
        store.save_event(contract_event(team_id, 1, content=NOT_UTF8_NAME))
        later = [
            contract_event(team_id, 2, content="lone \ud83d high, lone \udfff low"),
            contract_event(team_id, 3, content="plain"),
        ]
        if isinstance(store, BatchEventStore):
            store.save_events(later)
        else:
            for event in later:
                store.save_event(event)
        state = ContractState(notes=[NOT_UTF8_NAME], extra={NOT_UTF8_NAME: NOT_UTF8_NAME})
        store.save_agent_state(
            AgentStateSnapshot(team_id=team_id, agent_id="agent-1", name="@Worker", state=state)
        )
        store.save_event(contract_event(team_id, 4, content="after"))

        contents = [e.event.content for e in store.load_events(team_id)]  # type: ignore[attr-defined]
        assert contents == [
            NOT_UTF8_STORED,
            "lone \\ud83d high, lone \\udfff low",
            "plain",
            "after",
        ]
        (snapshot,) = store.load_agent_states(team_id)
        assert isinstance(snapshot.state, ContractState)
        assert snapshot.state.notes == [NOT_UTF8_STORED]
        assert snapshot.state.extra == {NOT_UTF8_STORED: NOT_UTF8_STORED}
        record = store.load_team(team_id)
        assert record is not None and isinstance(record.metadata, ContractMetadata)
        assert record.metadata.notes == f"from {NOT_UTF8_STORED}"

    @pytest.mark.parametrize("batching", [True, False], ids=["batched", "direct"])
    def test_one_refused_event_is_quarantined_and_persistence_goes_on(
        self, store: EventStore, batching: bool, caplog: pytest.LogCaptureFixture
    ) -> None:
        if batching and not isinstance(store, BatchEventStore):
            pytest.skip("store has no batch append (save_events)")
        team_id = uuid4()
        store.save_team(contract_process(team_id))
        refusing: Any = RefusingStore(store)
        subscriber = PersistenceSubscriber(team_id, refusing, batching=batching)
        poison = _message(team_id, f"{POISON_MARK} {NOT_UTF8_NAME}")
        with caplog.at_level(logging.ERROR, logger="akgentic.team.subscribers.persistence"):
            # One call: in batched mode the three events go to the store as one batch.
            subscriber.on_messages(
                [_message(team_id, "before"), poison, _message(team_id, "after")]
            )
            subscriber.on_message(_message(team_id, "later"))
            subscriber.close(timeout=30.0)

        events = store.load_events(team_id)
        assert [e.sequence for e in events] == [1, 2, 3, 4]
        stand_in = events[1].event
        assert isinstance(stand_in, EventQuarantined)
        assert stand_in.event_type == "akgentic.core.messages.message.UserMessage"
        assert "poison mark" in stand_in.reason
        assert POISON_MARK in stand_in.original and "\\udce9" in stand_in.original
        assert stand_in.original.isascii() and not stand_in.truncated
        assert stand_in.parent_id == poison.id
        others = [e.event.content for e in events if e.sequence != 2]  # type: ignore[attr-defined]
        assert others == ["before", "after", "later"]
        assert subscriber.durable_sequence == 4
        lines = [r.getMessage() for r in caplog.records]
        assert any("refused event 2" in line and "quarantined" in line for line in lines), lines

    def test_a_store_that_refuses_the_quarantine_record_too_stops_persistence(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        store.save_team(contract_process(team_id))
        store.save_event(contract_event(team_id, 1, content="first"))
        # A subscriber that does not know of sequence 1: the store refuses its
        # event and the record that would stand in for it alike (a duplicate),
        # so the store's answer is raised, and nothing is quarantined.
        stale = PersistenceSubscriber(team_id, store, batching=False)
        with pytest.raises(DuplicateEventError):
            stale.on_message(_message(team_id, "again"))
        batched = PersistenceSubscriber(team_id, store, batching=True)
        batched.on_message(_message(team_id, "again"))
        with pytest.raises(PersistenceStoppedError):
            batched.flush(timeout=30.0)
        assert [e.event.content for e in store.load_events(team_id)] == ["first"]  # type: ignore[attr-defined]

    def test_raw_reads_give_what_is_stored_without_decoding(self, store: EventStore) -> None:
        if not isinstance(store, RawRecordStore):
            pytest.skip("store has no raw reads (load_raw_team)")
        assert store.load_raw_team(uuid4()).record is None
        team_id = uuid4()
        store.save_team(contract_process(team_id))
        for sequence in (2, 1, 3):
            store.save_event(contract_event(team_id, sequence))
        state = ContractState(counter=7)
        store.save_agent_state(
            AgentStateSnapshot(team_id=team_id, agent_id="agent-1", name="@Worker", state=state)
        )
        raw = store.load_raw_team(team_id)
        assert raw.record is not None
        assert [sequence for sequence, _ in raw.events] == [1, 2, 3]
        assert [agent_id for agent_id, _ in raw.states] == ["agent-1"]
        [team] = check_store(store).teams
        assert team.ok and (team.name, team.events, team.states) == ("contract-team", 3, 1)

    def test_check_reads_a_team_whose_classes_do_not_import_here(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        # A message class from a module that is gone by the time of the check
        # (the team's code is not installed where the check runs).
        module = f"gone_{uuid4().hex}"
        (tmp_path / f"{module}.py").write_text(
            textwrap.dedent(
                """
                from akgentic.core.messages import Message

                class Custom(Message):
                    note: str = ""
                """
            )
        )
        sys.path.insert(0, str(tmp_path))
        try:
            custom = importlib.import_module(module).Custom
            team_id = uuid4()
            store.save_team(contract_process(team_id))
            store.save_event(contract_event(team_id, 1))
            store.save_event(PersistedEvent(team_id=team_id, sequence=2, event=custom(note="n")))
        finally:
            sys.path.remove(str(tmp_path))
            sys.modules.pop(module, None)
            (tmp_path / f"{module}.py").unlink()
            importlib.invalidate_caches()
        report = check_store(store)
        [team] = report.teams
        assert team.ok, team.problems
        assert not team.orphan and team.name == "contract-team" and team.events == 2
        if isinstance(store, RawRecordStore):
            [note] = [n for n in team.notes if module in n]
            assert "do not import" in note and "\n" not in note
