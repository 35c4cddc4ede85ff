"""The EventStore protocol: what every team store (built-in or plugin) implements.

A store keeps three things per team, all keyed by ``team_id``:

* the team record (:class:`~akgentic.team.models.Process`), upserted;
* the event log (:class:`~akgentic.team.models.PersistedEvent`), append-only,
  numbered by a per-team ``sequence``; a sequence is written once and a second
  write of the same ``(team_id, sequence)`` raises
  :class:`~akgentic.team.errors.DuplicateEventError`;
* the latest state of each agent
  (:class:`~akgentic.team.models.AgentStateSnapshot`), upserted per
  ``(team_id, agent_id)``.

Ownership: a team is run by one owner at a time. :meth:`EventStore.claim_team`
takes the team for an owner by compare-and-set: it refuses while a live owner
holds it (a lock tied to the owner's process or session, so a killed owner is
seen as gone at once) and otherwise bumps the record's ``epoch``. Every write
given ``epoch=`` is made only if the record still holds that epoch, checked in
the same transaction as the write; otherwise it raises
:class:`~akgentic.team.errors.TeamClaimLostError` and changes nothing. Writes
without ``epoch`` are not fenced (tools, tests, the contract's own fixtures).

Every write that returns is *acknowledged*: a process killed right after it (even
with SIGKILL) finds the write when the store is reopened, and the store is
never left unreadable. Stores must be safe to call from several threads at once
(a team manager shares one store across the orchestrator threads of many teams).

Reading a log in pages is optional for a store: :class:`PagedEventStore` adds
:meth:`~PagedEventStore.load_events_page`, and :func:`load_events_page` calls it
when the store has it and otherwise slices :meth:`EventStore.load_events`, so
a third-party store written before paging keeps working unchanged.

A store need not implement these methods itself: :class:`akgentic.team.stores.StoreBase`
implements them all (the claim and epoch policy included) over a few driver
primitives. Store plugins prove they meet this contract by subclassing
:class:`akgentic.testing.EventStoreContract`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from akgentic.team.models import (
    AgentStateSnapshot,
    PersistedEvent,
    Process,
    TeamOwner,
    TeamStatus,
)

__all__ = [
    "BatchEventStore",
    "EventStore",
    "PagedEventStore",
    "RawRecordStore",
    "RawTeam",
    "TakeoverEventStore",
    "check_page",
    "load_events_page",
    "slice_page",
]


@runtime_checkable
class EventStore(Protocol):
    """Storage of team records, event logs and agent state snapshots."""

    def save_event(self, event: PersistedEvent, *, epoch: int | None = None) -> None:
        """Append one event; a duplicate ``(team_id, sequence)`` raises ``DuplicateEventError``.

        With ``epoch``, only while the team record holds that epoch.
        """
        ...

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of a team, ordered by ascending sequence (``[]`` when none)."""
        ...

    def get_max_sequence(self, team_id: UUID) -> int:
        """The highest stored sequence of a team, ``0`` when its log is empty."""
        ...

    def save_team(self, process: Process, *, epoch: int | None = None) -> None:
        """Insert or replace the team record (its metadata index is derived again).

        With ``epoch``, only while the stored record holds that epoch (the
        record written keeps it).
        """
        ...

    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, or ``None`` when the team is unknown."""
        ...

    def delete_team(self, team_id: UUID) -> None:
        """Remove the record, events and states of one team; other teams are untouched.

        Deleting an unknown team is not an error.
        """
        ...

    def save_agent_state(self, snapshot: AgentStateSnapshot, *, epoch: int | None = None) -> None:
        """Insert or replace the state snapshot of ``(team_id, agent_id)`` (fenced by ``epoch``)."""
        ...

    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """The state snapshots of a team's agents (``[]`` when none)."""
        ...

    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every given filter (AND), oldest first.

        ``None`` (and an empty ``metadata`` mapping) constrains nothing. Each
        metadata item must equal the rendered value of an indexed field; there
        is no pattern, prefix or range matching. A metadata filter only ever
        narrows the result: it never reaches teams outside ``user_id``.
        """
        ...

    def claim_team(
        self, team_id: UUID, owner: TeamOwner, *, create: Process | None = None
    ) -> Process:
        """Claim a team for ``owner``; returns the record as claimed (new ``epoch`` and owner).

        With ``create``, the record is inserted with epoch 1 (``TeamStateError``
        if the team exists); otherwise the record must exist
        (``TeamNotFoundError``) and its epoch is bumped. A team held by a live
        owner raises :class:`~akgentic.team.errors.TeamOwnedError`. The claim
        stays held until :meth:`release_team`, :meth:`close` or the end of
        the process.
        """
        ...

    def release_team(self, team_id: UUID) -> None:
        """Drop this store's hold on a team it claimed (idempotent; the record is not written)."""
        ...

    def claim_held(self, team_id: UUID) -> bool:
        """Whether a live owner (through this store object or any other) holds the team."""
        ...

    def stored_team_ids(self) -> set[UUID]:
        """Every team id with a record, an event or an agent state (orphans included)."""
        ...

    def check_integrity(self) -> list[str]:
        """The storage's own consistency check; each problem found as one line (``[]``: sound)."""
        ...

    def close(self) -> None:
        """Release connections, file handles and claims; the store is unusable afterwards."""
        ...


@runtime_checkable
class BatchEventStore(EventStore, Protocol):
    """A store that can append several events in one durable write.

    Optional: :class:`~akgentic.team.subscribers.PersistenceSubscriber` uses it
    when the store offers it. The batch is atomic: either every event is
    stored or none is (a duplicate sequence rejects the whole batch).
    """

    def save_events(self, events: Sequence[PersistedEvent], *, epoch: int | None = None) -> None:
        """Append ``events`` atomically, in order (with ``epoch``: all of one team, fenced)."""
        ...


@runtime_checkable
class PagedEventStore(EventStore, Protocol):
    """A store that reads a window of a team's log without loading the whole log.

    Optional, like :class:`BatchEventStore`: callers go through
    :func:`load_events_page`, which falls back to :meth:`EventStore.load_events`
    for a store without it. The built-in stores and the postgres and mongo
    plugins implement it natively.
    """

    def load_events_page(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None = None,
        before_sequence: int | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> list[PersistedEvent]:
        """The events with ``after_sequence < sequence < before_sequence``, ascending.

        ``None`` bounds nothing. With ``limit``, at most that many: the lowest
        sequences of the window, or the highest ones with ``newest=True`` (still
        returned in ascending order). An empty window or an unknown team gives
        ``[]``. Arguments are checked by :func:`check_page` (``ValueError``).
        """
        ...


def check_page(after_sequence: int | None, before_sequence: int | None, limit: int | None) -> None:
    """Refuse page arguments no store could answer: negative bounds, a limit below one."""
    for name, value in (("after_sequence", after_sequence), ("before_sequence", before_sequence)):
        if value is not None and (isinstance(value, bool) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise ValueError(f"limit must be at least 1, got {limit!r}")


def slice_page(
    events: Sequence[PersistedEvent],
    *,
    after_sequence: int | None,
    before_sequence: int | None,
    limit: int | None,
    newest: bool,
) -> list[PersistedEvent]:
    """The page of an ascending list of events (the reference semantics of a page)."""
    window = [
        e
        for e in events
        if (after_sequence is None or e.sequence > after_sequence)
        and (before_sequence is None or e.sequence < before_sequence)
    ]
    if limit is None or len(window) <= limit:
        return window
    return window[-limit:] if newest else window[:limit]


def load_events_page(
    store: EventStore,
    team_id: UUID,
    *,
    after_sequence: int | None = None,
    before_sequence: int | None = None,
    limit: int | None = None,
    newest: bool = False,
) -> list[PersistedEvent]:
    """A page of a team's log from any store (see :meth:`PagedEventStore.load_events_page`).

    Uses the store's own ``load_events_page`` when it has one; otherwise loads
    the whole log and slices it, which is correct for every store, only slower.
    """
    check_page(after_sequence, before_sequence, limit)
    native = getattr(store, "load_events_page", None)
    if callable(native):
        page: list[PersistedEvent] = native(
            team_id,
            after_sequence=after_sequence,
            before_sequence=before_sequence,
            limit=limit,
            newest=newest,
        )
        return page
    return slice_page(
        store.load_events(team_id),
        after_sequence=after_sequence,
        before_sequence=before_sequence,
        limit=limit,
        newest=newest,
    )


@runtime_checkable
class TakeoverEventStore(EventStore, Protocol):
    """A store that lets a placement layer take a team over from a live but lapsed owner.

    Optional: ``TeamManager.adopt`` uses it when the store offers it (the
    SQLite and YAML stores and the postgres and mongo plugins do). Unlike
    :meth:`EventStore.claim_team`, it does not ask whether the current owner
    is alive (a paused process still holds its session); the runtime's lease
    decided that. The compare-and-set on ``epoch`` still holds: it succeeds
    only while the record holds ``epoch``, bumps it and records ``owner``
    (otherwise :class:`~akgentic.team.errors.TeamClaimLostError`), and every
    later write of the previous owner is refused.
    """

    def take_over_team(self, team_id: UUID, owner: TeamOwner, *, epoch: int) -> Process:
        """Bump the epoch from ``epoch`` for ``owner``; returns the record as claimed."""
        ...


@dataclass
class RawTeam:
    """What a store holds of one team, as stored: nothing decoded into classes.

    ``record`` is the team record's JSON text or data (``None`` when there is
    none), ``events`` the ``(sequence, JSON text or data)`` of each stored
    event by ascending sequence, ``states`` the ``(agent_id, JSON text or
    data)`` of each agent snapshot. Reading it imports no class the records
    name, so a check can run where the team's agent classes do not import.
    """

    record: str | dict[str, Any] | None
    events: list[tuple[int, str | dict[str, Any]]] = field(default_factory=list)
    states: list[tuple[str, str | dict[str, Any]]] = field(default_factory=list)


@runtime_checkable
class RawRecordStore(EventStore, Protocol):
    """A store that hands out a team's stored records undecoded.

    Optional: ``akgentic store check`` and ``repair`` use it when the store
    offers it (the SQLite and YAML stores do) and otherwise decode through
    :meth:`EventStore.load_team` and friends, which import the classes the
    records name.
    """

    def load_raw_team(self, team_id: UUID) -> RawTeam:
        """The team's record, events and agent states as stored (see :class:`RawTeam`)."""
        ...
