"""EventStoreContract: the behaviour every event store must show, as one pytest class.

A store implementation (built-in or plugin) proves it meets the
:class:`~akgentic.team.store.EventStore` contract by subclassing this class in
its test suite and saying where a fresh, empty storage lives::

    import pytest
    from akgentic.testing import EventStoreContract

    class TestMyStore(EventStoreContract):
        opener = "akgentic_mystore.store:MyStore.from_url"   # or leave the default

        @pytest.fixture
        def store_url(self, tmp_path):
            return f"mystore:///{tmp_path}/data"

``store_url`` must name empty storage, different for each test. ``opener`` is a
``"module:attribute"`` path of a callable ``(url) -> EventStore``; the default,
:func:`akgentic.team.open_event_store`, finds the store through the installed
plugins. It is a path rather than a callable because the crash test opens the
store in a child process too. The class gives a ``store`` fixture (opened from
``store_url``, closed afterwards) and :meth:`open_store` for a second handle on
the same storage. Set ``supports_crash_test = False`` for a store that keeps
nothing after its process dies (an in-memory test double).

Besides storage, the kit checks ownership: creating a team by claim, a held
claim refusing every other handle until released, writes under an older epoch
refused without effect, fenced appends refused for a team without a record
(no orphans), several handles racing to claim one team (exactly one wins,
``claim_race_rounds`` times), and a claim held by a SIGKILLed process being
free at once. ``stored_team_ids`` and ``check_integrity`` are checked too.

And paging (:class:`~akgentic.testing.event_store_paging.PagingContract`):
windows of a log read through :func:`akgentic.team.store.load_events_page`,
in order, with exclusive bounds, ``limit`` and ``newest``, empty past the
end; set ``native_paging = True`` when the store implements
``load_events_page`` itself.

And poison (:class:`~akgentic.testing.event_store_poison.PoisonContract`):
text that is not UTF-8 (a file name, a lone surrogate) is stored escaped in
events, states and records, and one event the store refuses is quarantined
by the persistence subscriber while the events after it are written.

And takeover (:class:`~akgentic.testing.event_store_takeover.TakeoverContract`),
for stores with ``take_over_team``: the epoch moves to a new owner while the
old one still holds its claim, the old owner's writes are refused from then
on, across processes too (frozen owners woken after being taken over, and an
owner writing while it is taken over), with every acknowledged event kept
once; set ``supports_takeover = True`` when the store must implement it.

And fork (:class:`~akgentic.testing.event_store_fork.ForkContract`): a team's log
copied into a new team up to a sequence (first, middle, last event; a fork of a
fork; a log growing meanwhile; a call in flight closed as interrupted; bad fork
points refused with nothing made; a rewind; SIGKILL at each step).

And checkpoints (:class:`~akgentic.testing.event_store_checkpoint.CheckpointContract`):
the checkpoints a team's persistence writes each equal the fold of the log before
them; a restore reads the newest one and the events after it; one failing its
checksum is skipped for an older one or the whole log; a fork never uses a
checkpoint taken after its fork point; a SIGKILL while checkpoints are written
loses no acknowledged event.

And stop (:class:`~akgentic.testing.event_store_stop.StopContract`): a real team
stopped while its agent waits on a model request that never answers ends at
once, and no agent writes into the log after the team's stop event.

And virtual teams (:class:`~akgentic.testing.event_store_virtual.VirtualTeamsContract`):
an idle team passivates and a message activates it; concurrent messages share
one activation and one claim; one owner at a time across managers; a team that
cannot be rebuilt is recorded broken with its reason and not tried again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from uuid import UUID, uuid4

import pytest

from akgentic.core.agent_state import BaseState
from akgentic.core.messages import (
    ClosedNotification,
    EventMessage,
    SentMessage,
    UserMessage,
)
from akgentic.team.errors import DuplicateEventError
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus
from akgentic.team.store import EventStore
from akgentic.testing.event_store_checkpoint import CheckpointContract
from akgentic.testing.event_store_fixtures import (
    HOSTILE_VALUES,
    ContractMetadata,
    ContractState,
    contract_card,
    contract_event,
    contract_messages,
    contract_process,
    resolve_opener,
)
from akgentic.testing.event_store_fork import ForkContract
from akgentic.testing.event_store_ownership import OwnershipContract, contract_owner
from akgentic.testing.event_store_paging import PagingContract
from akgentic.testing.event_store_poison import PoisonContract
from akgentic.testing.event_store_stop import StopContract
from akgentic.testing.event_store_takeover import TakeoverContract
from akgentic.testing.event_store_virtual import VirtualTeamsContract

__all__ = [
    "HOSTILE_VALUES",
    "ContractMetadata",
    "ContractState",
    "EventStoreContract",
    "contract_card",
    "contract_event",
    "contract_messages",
    "contract_owner",
    "contract_process",
]


def crash_child(opener: str, url: str, team_id: str) -> None:
    """Child process of the crash test: append forever, printing each acknowledged sequence."""
    store = resolve_opener(opener)(url)
    team = UUID(team_id)
    process = contract_process(team, metadata=ContractMetadata(tenant="crash"))
    store.save_team(process)
    sequence = 0
    while True:
        sequence += 1
        store.save_event(contract_event(team, sequence, content=f"{sequence}:" + "x" * 4000))
        if sequence % 5 == 0:
            state = ContractState(counter=sequence, notes=["y" * 2000])
            store.save_agent_state(
                AgentStateSnapshot(team_id=team, agent_id="agent-1", name="@Worker", state=state)
            )
        if sequence % 7 == 0:
            store.save_team(process.with_status(TeamStatus.RUNNING))
        print(sequence, flush=True)


class EventStoreContract(
    OwnershipContract,
    PagingContract,
    TakeoverContract,
    PoisonContract,
    StopContract,
    VirtualTeamsContract,
    ForkContract,
    CheckpointContract,
):
    """The event store contract as pytest tests; subclass it (see the module docstring)."""

    opener: ClassVar[str] = "akgentic.team.urls:open_event_store"
    supports_crash_test: ClassVar[bool] = True
    #: How many acknowledged events the crash test waits for before killing the child.
    crash_after: ClassVar[int] = 40
    #: Events each thread appends in the concurrency test.
    concurrent_appends: ClassVar[int] = 150

    # -- fixtures ---------------------------------------------------------
    @pytest.fixture
    def store_url(self) -> str:
        """URL of fresh, empty storage for one test: every subclass must override it."""
        raise NotImplementedError(
            f"{type(self).__name__} must define a `store_url` fixture returning the URL of "
            "empty storage (e.g. under tmp_path)"
        )

    @pytest.fixture
    def store(self, store_url: str) -> Iterator[EventStore]:
        """The store under test, opened from ``store_url`` and closed after the test."""
        store = self.open_store(store_url)
        try:
            yield store
        finally:
            store.close()

    def open_store(self, url: str) -> EventStore:
        """Open another handle on the storage at ``url`` (through :attr:`opener`)."""
        return resolve_opener(self.opener)(url)

    # -- teams ------------------------------------------------------------
    def test_store_satisfies_the_event_store_protocol(self, store: EventStore) -> None:
        assert isinstance(store, EventStore)

    def test_unknown_team_has_no_record_events_or_states(self, store: EventStore) -> None:
        team_id = uuid4()
        assert store.load_team(team_id) is None
        assert store.load_events(team_id) == []
        assert store.load_agent_states(team_id) == []
        assert store.get_max_sequence(team_id) == 0
        assert store.list_teams() == []

    def test_saved_team_loads_back_equal(self, store: EventStore) -> None:
        process = contract_process(metadata=ContractMetadata(tenant="acme", priority=2))
        store.save_team(process)
        loaded = store.load_team(process.team_id)
        assert loaded == process
        assert loaded is not None
        assert type(loaded.metadata) is ContractMetadata
        assert loaded.team_card.metadata_type is ContractMetadata

    def test_saving_a_team_again_replaces_its_record(self, store: EventStore) -> None:
        process = contract_process(metadata=ContractMetadata(tenant="acme"))
        store.save_team(process)
        stopped = process.with_status(TeamStatus.STOPPED)
        store.save_team(stopped)
        assert store.load_team(process.team_id) == stopped
        assert [p.team_id for p in store.list_teams()] == [process.team_id]

    # -- events -----------------------------------------------------------
    def test_events_load_in_sequence_order_whatever_the_write_order(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        for sequence in (2, 1, 4, 3, 5):
            store.save_event(contract_event(team_id, sequence))
        loaded = store.load_events(team_id)
        assert [e.sequence for e in loaded] == [1, 2, 3, 4, 5]
        assert [e.event.content for e in loaded] == [  # type: ignore[attr-defined]
            f"message {i}" for i in range(1, 6)
        ]

    def test_max_sequence_is_the_highest_stored_sequence(self, store: EventStore) -> None:
        team_id = uuid4()
        assert store.get_max_sequence(team_id) == 0
        for sequence in (1, 2, 3):
            store.save_event(contract_event(team_id, sequence))
        assert store.get_max_sequence(team_id) == 3
        assert store.get_max_sequence(uuid4()) == 0

    def test_a_duplicate_sequence_is_refused_and_the_first_event_kept(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        store.save_event(contract_event(team_id, 1, content="first"))
        with pytest.raises(DuplicateEventError) as info:
            store.save_event(contract_event(team_id, 1, content="second"))
        assert info.value.sequence == 1
        assert info.value.team_id == team_id
        loaded = store.load_events(team_id)
        assert [e.event.content for e in loaded] == ["first"]  # type: ignore[attr-defined]

    def test_a_batch_holding_a_taken_sequence_stores_nothing(self, store: EventStore) -> None:
        save_events = getattr(store, "save_events", None)
        if save_events is None:
            pytest.skip("store has no batch append (save_events)")
        team_id = uuid4()
        store.save_event(contract_event(team_id, 2))
        with pytest.raises(DuplicateEventError):
            save_events([contract_event(team_id, 1), contract_event(team_id, 2)])
        assert [e.sequence for e in store.load_events(team_id)] == [2]
        save_events([contract_event(team_id, 1), contract_event(team_id, 3)])
        assert [e.sequence for e in store.load_events(team_id)] == [1, 2, 3]

    def test_the_same_sequence_in_two_teams_is_not_a_duplicate(self, store: EventStore) -> None:
        first, second = uuid4(), uuid4()
        store.save_event(contract_event(first, 1, content="one"))
        store.save_event(contract_event(second, 1, content="two"))
        assert [e.event.content for e in store.load_events(first)] == ["one"]  # type: ignore[attr-defined]
        assert [e.event.content for e in store.load_events(second)] == ["two"]  # type: ignore[attr-defined]

    def test_core_messages_come_back_as_their_own_classes(self, store: EventStore) -> None:
        team_id = uuid4()
        messages = contract_messages(team_id)
        for sequence, message in enumerate(messages, start=1):
            store.save_event(PersistedEvent(team_id=team_id, sequence=sequence, event=message))
        loaded = store.load_events(team_id)
        assert [type(e.event) for e in loaded] == [type(m) for m in messages]
        assert [e.event for e in loaded] == messages
        sent = loaded[3].event
        assert isinstance(sent, SentMessage)
        assert type(sent.message) is UserMessage
        assert sent.recipient.name == "@Worker"
        closed = loaded[8].event
        assert isinstance(closed, EventMessage)
        assert closed.event == ClosedNotification(message_id=sent.message.id)
        assert all(e.team_id == team_id for e in loaded)

    # -- agent states -----------------------------------------------------
    def test_agent_states_come_back_as_their_subclass_latest_per_agent(
        self, store: EventStore
    ) -> None:
        team_id = uuid4()
        for counter in (1, 2, 3):
            state = ContractState(counter=counter, notes=[f"n{counter}"], extra={"k": [counter]})
            store.save_agent_state(
                AgentStateSnapshot(team_id=team_id, agent_id="agent-a", name="@A", state=state)
            )
        store.save_agent_state(
            AgentStateSnapshot(team_id=team_id, agent_id="agent-b", name="@B", state=BaseState())
        )
        states = {s.agent_id: s for s in store.load_agent_states(team_id)}
        assert sorted(states) == ["agent-a", "agent-b"]
        latest = states["agent-a"].state
        assert type(latest) is ContractState
        assert latest == ContractState(counter=3, notes=["n3"], extra={"k": [3]})
        assert states["agent-a"].name == "@A"
        assert type(states["agent-b"].state) is BaseState
        assert store.get_max_sequence(team_id) == 0
        assert store.load_events(team_id) == []

    # -- delete -----------------------------------------------------------
    def _populate(self, store: EventStore, user_id: str = "alice", tenant: str = "acme") -> UUID:
        process = contract_process(user_id=user_id, metadata=ContractMetadata(tenant=tenant))
        store.save_team(process)
        for sequence in (1, 2):
            store.save_event(contract_event(process.team_id, sequence))
        store.save_agent_state(
            AgentStateSnapshot(
                team_id=process.team_id, agent_id="agent", state=ContractState(counter=1)
            )
        )
        return process.team_id

    def test_delete_team_removes_its_record_events_and_states_only(self, store: EventStore) -> None:
        doomed = self._populate(store, tenant="acme")
        kept = self._populate(store, tenant="acme")
        store.delete_team(doomed)
        assert store.load_team(doomed) is None
        assert store.load_events(doomed) == []
        assert store.load_agent_states(doomed) == []
        assert store.get_max_sequence(doomed) == 0
        assert store.list_teams(metadata={"tenant": "acme"}) == [store.load_team(kept)]
        assert [e.sequence for e in store.load_events(kept)] == [1, 2]
        assert len(store.load_agent_states(kept)) == 1

    def test_deleting_twice_or_deleting_an_unknown_team_is_not_an_error(
        self, store: EventStore
    ) -> None:
        team_id = self._populate(store)
        store.delete_team(team_id)
        store.delete_team(team_id)
        store.delete_team(uuid4())
        assert store.load_team(team_id) is None

    def test_a_deleted_team_id_starts_again_from_sequence_one(self, store: EventStore) -> None:
        team_id = self._populate(store)
        store.delete_team(team_id)
        store.save_event(contract_event(team_id, 1, content="again"))
        assert [e.event.content for e in store.load_events(team_id)] == ["again"]  # type: ignore[attr-defined]

    # -- list filters -----------------------------------------------------
    def test_list_teams_combines_user_status_and_metadata_filters_with_and(
        self, store: EventStore
    ) -> None:
        def team(user: str, status: TeamStatus, **fields: Any) -> Process:
            process = contract_process(
                user_id=user, status=status, metadata=ContractMetadata(**fields)
            )
            store.save_team(process)
            return process

        a = team("alice", TeamStatus.RUNNING, tenant="acme", channel="email")
        b = team("alice", TeamStatus.STOPPED, tenant="acme", channel="phone")
        c = team("bob", TeamStatus.RUNNING, tenant="acme", channel="email")
        d = team("alice", TeamStatus.RUNNING, tenant="globex", channel="email")

        def ids(**filters: Any) -> set[UUID]:
            return {p.team_id for p in store.list_teams(**filters)}

        assert ids() == {a.team_id, b.team_id, c.team_id, d.team_id}
        assert ids(user_id="alice") == {a.team_id, b.team_id, d.team_id}
        assert ids(status=TeamStatus.RUNNING) == {a.team_id, c.team_id, d.team_id}
        assert ids(metadata={"tenant": "acme"}) == {a.team_id, b.team_id, c.team_id}
        assert ids(metadata={"tenant": "acme", "channel": "email"}) == {a.team_id, c.team_id}
        assert ids(user_id="alice", status=TeamStatus.RUNNING, metadata={"tenant": "acme"}) == {
            a.team_id
        }
        assert ids(metadata={"tenant": "acme", "channel": "fax"}) == set()
        assert ids(metadata={"notes": ""}) == set()  # an unindexed field never matches
        assert ids(metadata={}) == ids()

    def test_list_teams_returns_oldest_first(self, store: EventStore) -> None:
        start = datetime(2024, 1, 1, tzinfo=UTC)
        created = [
            contract_process(created_at=start + timedelta(days=offset)) for offset in (2, 0, 1)
        ]
        for process in created:
            store.save_team(process)
        listed = [p.created_at for p in store.list_teams()]
        assert listed == sorted(listed)

    def test_typed_metadata_is_filtered_by_its_rendered_value(self, store: EventStore) -> None:
        process = contract_process(
            metadata=ContractMetadata(tenant="acme", priority=3, urgent=True)
        )
        store.save_team(process)
        assert store.list_teams(metadata={"priority": "3", "urgent": "true"}) == [process]
        assert store.list_teams(metadata={"urgent": "True"}) == []
        assert store.list_teams(metadata={"priority": "03"}) == []

    def test_an_unset_optional_field_matches_no_filter_not_even_empty(
        self, store: EventStore
    ) -> None:
        unset = contract_process(metadata=ContractMetadata(tenant="acme"))
        empty = contract_process(metadata=ContractMetadata(tenant="acme", channel=""))
        store.save_team(unset)
        store.save_team(empty)
        assert [p.team_id for p in store.list_teams(metadata={"channel": ""})] == [empty.team_id]
        assert unset.metadata_indexes == ["tenant|acme"]

    def test_hostile_metadata_values_match_only_themselves(self, store: EventStore) -> None:
        teams: dict[str, UUID] = {}
        for value in (*HOSTILE_VALUES, "abc", "plain", "acme", "contoso"):
            process = contract_process(metadata=ContractMetadata(tenant=value))
            store.save_team(process)
            teams[value] = process.team_id
        for value in HOSTILE_VALUES:
            found = [p.team_id for p in store.list_teams(metadata={"tenant": value})]
            assert found == [teams[value]], f"filter tenant={value[:40]!r} matched {found}"
        for key in ("tenant' OR '1'='1", "tenant|acme", "%", "tenant\\"):
            assert store.list_teams(metadata={key: "acme"}) == [], f"key {key!r} matched"

    def test_a_pipe_inside_a_value_cannot_forge_a_second_entry(self, store: EventStore) -> None:
        forged = contract_process(metadata=ContractMetadata(tenant="acme|channel|email"))
        store.save_team(forged)
        assert store.list_teams(metadata={"tenant": "acme"}) == []
        assert store.list_teams(metadata={"channel": "email"}) == []
        assert store.list_teams(metadata={"tenant": "acme|channel|email"}) == [forged]

    def test_a_metadata_filter_never_widens_user_scoping(self, store: EventStore) -> None:
        mine = contract_process(user_id="alice", metadata=ContractMetadata(tenant="acme"))
        theirs = contract_process(user_id="bob", metadata=ContractMetadata(tenant="acme"))
        store.save_team(mine)
        store.save_team(theirs)
        for value in ("acme", "acme' OR user_id='bob", "%", "*"):
            found = store.list_teams(user_id="alice", metadata={"tenant": value})
            assert all(p.user_id == "alice" for p in found)
        assert store.list_teams(user_id="alice", metadata={"tenant": "acme"}) == [mine]
        assert store.list_teams(user_id="carol", metadata={"tenant": "acme"}) == []
        assert store.list_teams(user_id="' OR '1'='1") == []

    def test_replacing_metadata_drops_the_old_index_entries(self, store: EventStore) -> None:
        process = contract_process(metadata=ContractMetadata(tenant="acme", channel="email"))
        store.save_team(process)
        replaced = process.with_metadata(ContractMetadata(tenant="acme"))
        store.save_team(replaced)
        assert store.list_teams(metadata={"channel": "email"}) == []
        assert store.list_teams(metadata={"tenant": "acme"}) == [replaced]
        cleared = replaced.with_metadata(None)
        store.save_team(cleared)
        assert store.list_teams(metadata={"tenant": "acme"}) == []
        loaded = store.load_team(process.team_id)
        assert loaded is not None
        assert loaded.metadata is None
        assert loaded.metadata_indexes == []

    def test_stale_index_entries_on_a_record_are_derived_again_on_write(
        self, store: EventStore
    ) -> None:
        process = contract_process(metadata=ContractMetadata(tenant="acme"))
        lying = process.model_copy(update={"metadata_indexes": ["tenant|globex"]})
        store.save_team(lying)
        assert store.list_teams(metadata={"tenant": "globex"}) == []
        assert store.list_teams(metadata={"tenant": "acme"}) == [process]

    # -- concurrency and durability ---------------------------------------
    def test_two_threads_appending_at_once_lose_nothing(self, store: EventStore) -> None:
        shared, own = uuid4(), [uuid4(), uuid4()]
        count = self.concurrent_appends
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def append(worker: int) -> None:
            try:
                barrier.wait(timeout=30)
                for i in range(count):
                    store.save_event(contract_event(shared, 2 * i + 1 + worker))
                    store.save_event(contract_event(own[worker], i + 1))
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=append, args=(w,)) for w in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
        assert [e.sequence for e in store.load_events(shared)] == list(range(1, 2 * count + 1))
        assert store.get_max_sequence(shared) == 2 * count
        for team_id in own:
            assert [e.sequence for e in store.load_events(team_id)] == list(range(1, count + 1))

    def test_writes_through_one_handle_are_read_through_another(
        self, store: EventStore, store_url: str
    ) -> None:
        team_id = self._populate(store)
        other = self.open_store(store_url)
        try:
            assert other.load_team(team_id) == store.load_team(team_id)
            assert other.get_max_sequence(team_id) == 2
            other.save_event(contract_event(team_id, 3))
            with pytest.raises(DuplicateEventError):
                other.save_event(contract_event(team_id, 2))
        finally:
            other.close()
        assert store.get_max_sequence(team_id) == 3
        with pytest.raises(DuplicateEventError):
            store.save_event(contract_event(team_id, 3))

    def test_acknowledged_events_survive_sigkill_and_the_store_stays_readable(
        self, store_url: str
    ) -> None:
        if not self.supports_crash_test:
            pytest.skip("this store keeps nothing once its process is gone")
        team_id = uuid4()
        code = (
            "from akgentic.testing.event_store_contract import crash_child\n"
            f"crash_child({self.opener!r}, {store_url!r}, {str(team_id)!r})\n"
        )
        acknowledged: list[int] = []
        # ``with`` closes the child's pipes once it is reaped.
        with subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as child:
            try:
                assert child.stdout is not None
                for line in child.stdout:
                    acknowledged.append(int(line))
                    if len(acknowledged) >= self.crash_after:
                        break
                os.kill(child.pid, signal.SIGKILL)
                # Lines already in the pipe were printed after their write returned.
                rest = child.stdout.read()
                acknowledged.extend(int(line) for line in rest.splitlines() if line.strip())
                child.wait(timeout=60)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=60)
            stderr = child.stderr.read() if child.stderr is not None else ""
        assert len(acknowledged) >= self.crash_after, f"child stopped early: {stderr}"
        assert child.returncode == -signal.SIGKILL

        reopened = self.open_store(store_url)
        try:
            sequences = [e.sequence for e in reopened.load_events(team_id)]
            assert set(acknowledged) <= set(sequences)
            assert sequences == list(range(1, len(sequences) + 1))
            assert len(sequences) <= max(acknowledged) + 1
            assert reopened.get_max_sequence(team_id) == len(sequences)
            process = reopened.load_team(team_id)
            assert process is not None
            assert process.metadata == ContractMetadata(tenant="crash")
            states = reopened.load_agent_states(team_id)
            assert [type(s.state) for s in states] == [ContractState]
            listed = reopened.list_teams(metadata={"tenant": "crash"})
            assert [p.team_id for p in listed] == [team_id]
            following = len(sequences) + 1
            reopened.save_event(contract_event(team_id, following))
            assert reopened.get_max_sequence(team_id) == following
            assert reopened.load_events(team_id)[-1].sequence == following
        finally:
            reopened.close()
