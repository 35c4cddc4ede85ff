"""StoreBase: what every event store does the same way, over a few driver primitives.

Every store keeps the same ownership state machine and maps the same outcomes to
the same errors; only how it reads, writes and locks differs. :class:`StoreBase`
implements the whole :class:`~akgentic.team.store.EventStore` protocol (and
the optional batch, paging, takeover and raw-read ones) once:

* **claims and epochs**: ``claim_team`` (create with epoch 1 or bump the epoch,
  ``TeamStateError`` when creating a team that exists, ``TeamNotFoundError``
  when claiming one that does not, ``TeamOwnedError`` while a live owner holds
  it), ``take_over_team`` (compare-and-set from an epoch, ``TeamClaimLostError``
  otherwise), ``release_team``, ``claim_held``, and the ``epoch=`` fence of
  every ``save_*`` (:meth:`StoreBase._check_epoch`: a record holding another
  epoch, or none, refuses the write);
* **records**: the metadata index derived again on every team write, records,
  events and states decoded from what the driver stored, ``list_teams``
  filters checked again on the decoded record, oldest first;
* **errors**: ``DuplicateEventError`` naming the event a refused append collided
  on, ``EventStoreError`` once the store is closed, and a driver's own
  exceptions (:attr:`StoreBase._driver_errors`) turned into store errors.

A store subclasses it and implements the primitives, each documented below with
its contract. They are protected methods (one leading underscore): only
StoreBase calls them, and only on an open store, but for ``_release_hold`` and
``_hold_alive``, which must work after ``close`` too. ``_stored_sequences`` and
``_max_sequence`` have defaults reading through ``_scan_events``, and ``_copy_from``
(what a fork copies a page of a log with, :mod:`akgentic.team.fork`) one over
``_scan_events`` and ``_append``. The primitives:

======================  ======================================================
reads (as stored)       :meth:`~StoreBase._read_team`, :meth:`~StoreBase._scan_events`,
                        :meth:`~StoreBase._read_states`, :meth:`~StoreBase._scan_teams`,
                        :meth:`~StoreBase._stored_keys`,
                        :meth:`~StoreBase._stored_sequences`,
                        :meth:`~StoreBase._max_sequence`
writes (fenced)         :meth:`~StoreBase._append`, :meth:`~StoreBase._put_team`,
                        :meth:`~StoreBase._put_state`, :meth:`~StoreBase._erase_team`
ownership               :meth:`~StoreBase._cas_team`, :meth:`~StoreBase._take_hold`,
                        :meth:`~StoreBase._release_hold`, :meth:`~StoreBase._hold_alive`
checks and lifecycle    :meth:`~StoreBase._check_integrity`, ``close`` (setting ``_closed``)
forks (optional)        :meth:`~StoreBase._copy_from` (default: scan, decode, append)
======================  ======================================================

See ``docs/event-stores.md`` ("Writing a store plugin").
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar
from uuid import UUID

from akgentic.core.utils.serializer import shared_addresses
from akgentic.team.errors import (
    DuplicateEventError,
    EventLogUnreadableError,
    EventStoreError,
    TeamClaimLostError,
    TeamNotFoundError,
    TeamStateError,
)
from akgentic.team.metadata import derive_metadata_indexes, metadata_filter_entries
from akgentic.team.models import (
    AgentStateSnapshot,
    PersistedEvent,
    Process,
    TeamOwner,
    TeamStatus,
    utc_now,
)
from akgentic.team.store import RawTeam, check_page
from akgentic.team.stores.claims import claim_error
from akgentic.team.stores.codec import decode_event, decode_process, decode_state
from akgentic.team.stores.common import ClosingStore, matching_teams

__all__ = ["Decide", "Payload", "StoreBase", "indexed", "repeated_event"]

logger = logging.getLogger(__name__)

#: A stored record, event or state as the driver keeps it: JSON text, or its data.
Payload = str | dict[str, Any]
#: What :meth:`StoreBase._cas_team` applies to the stored record: the record to
#: write instead (or an error raised, which leaves the record unchanged).
Decide = Callable[[Process | None], Process]

_S = TypeVar("_S", bound="StoreBase")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _driven(method: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """Turn the driver's own failures (``_driver_errors``) into store errors."""

    @functools.wraps(method)
    def call(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except self._driver_errors as exc:
            raise self._driver_error(exc) from exc

    return call


def indexed(process: Process, **update: Any) -> Process:
    """``process`` with ``update`` applied and its metadata index derived again."""
    update["metadata_indexes"] = derive_metadata_indexes(process.metadata)
    return process.model_copy(update=update)


def repeated_event(events: Sequence[PersistedEvent]) -> DuplicateEventError | None:
    """The error naming the first ``(team_id, sequence)`` a batch holds twice, if any."""
    seen: set[tuple[UUID, int]] = set()
    for event in events:
        key = (event.team_id, event.sequence)
        if key in seen:
            return DuplicateEventError(*key)
        seen.add(key)
    return None


def _as_utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class StoreBase(ClosingStore):
    """An :class:`~akgentic.team.store.EventStore` over driver primitives (see the module doc).

    Satisfies ``EventStore``, ``BatchEventStore``, ``PagedEventStore``,
    ``TakeoverEventStore`` and ``RawRecordStore``. Thread safety and durability
    are the driver's: each primitive must be safe to call from several threads
    and acknowledge only what is durable.
    """

    #: Where skipped records and odd team ids are logged (drivers name their own).
    _logger: ClassVar[logging.Logger] = logger
    #: Exceptions of the driver that public methods turn into ``_driver_error(exc)``.
    _driver_errors: ClassVar[tuple[type[Exception], ...]] = ()
    #: Set by ``close``: every public method but ``release_team``, ``claim_held`` and
    #: ``close`` then raises ``EventStoreError``.
    _closed: bool = False

    # -- driver hooks (errors, liveness of the store) ---------------------
    def _driver_error(self, exc: Exception) -> Exception:
        """The store error standing for a driver failure listed in ``_driver_errors``."""
        return EventStoreError(f"{self!r} failed: {exc}")

    def _check_open(self) -> None:
        if self._closed:
            raise EventStoreError(f"this {type(self).__name__} is closed")

    @staticmethod
    def _check_epoch(team_id: UUID, epoch: int | None, found: int | None) -> None:
        """The fence: refuse a write given ``epoch`` unless the record holds it.

        Write primitives call it with the epoch they read, in the same
        transaction (or under the same lock) as the write that follows, and
        ``found=None`` when there is no record: a fenced write never creates
        a team's data without its record.
        """
        if epoch is not None and found != epoch:
            raise TeamClaimLostError(team_id, epoch, found)

    def _duplicate(self, events: Sequence[PersistedEvent]) -> DuplicateEventError:
        """The error for an append the storage refused as a duplicate (call after rolling back).

        Names a sequence the batch repeats, else the first event whose sequence
        is stored, else (taken by a writer that has since rolled back) the first.
        """
        repeated = repeated_event(events)
        if repeated is not None:
            return repeated
        wanted: dict[UUID, list[int]] = {}
        for event in events:
            wanted.setdefault(event.team_id, []).append(event.sequence)
        taken = {
            (team_id, sequence)
            for team_id, sequences in wanted.items()
            for sequence in self._stored_sequences(team_id, sequences)
        }
        for event in events:
            if (event.team_id, event.sequence) in taken:
                return DuplicateEventError(event.team_id, event.sequence)
        return DuplicateEventError(events[0].team_id, events[0].sequence)

    # -- primitives: reads --------------------------------------------------
    def _read_team(self, team_id: UUID) -> Payload | None:
        """The team record as stored (``None`` when there is none); nothing decoded."""
        raise NotImplementedError

    def _scan_events(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None,
        before_sequence: int | None,
        limit: int | None,
        newest: bool,
    ) -> Iterable[tuple[int, Payload]]:
        """``(sequence, payload)`` of the events in a window of the log, ascending.

        The window is ``after_sequence < sequence < before_sequence`` (``None``
        bounds nothing); with ``limit``, its lowest ``limit`` sequences, or its
        highest with ``newest`` (still returned ascending). All ``None`` is the
        whole log, which a resume reads: a driver may stream it (the base
        decodes while iterating). Arguments are already checked.
        """
        raise NotImplementedError

    def _read_states(self, team_id: UUID) -> Iterable[tuple[str, Payload]]:
        """``(agent_id, payload)`` of every agent state of the team, by agent id."""
        raise NotImplementedError

    def _scan_teams(
        self, user_id: str | None, status: TeamStatus | None, entries: Sequence[str]
    ) -> Iterable[tuple[Any, Payload]]:
        """``(team_id, record)`` of the teams that may match the filters (narrowed as cheaply
        as the storage can; the base decodes each and checks every filter again).

        ``entries`` are metadata index entries every match holds
        (``metadata_filter_entries``); an empty sequence constrains nothing.
        """
        raise NotImplementedError

    def _stored_keys(self) -> Iterable[Any]:
        """The team id of every record, event and state (repeats allowed, as stored)."""
        raise NotImplementedError

    def _stored_sequences(self, team_id: UUID, sequences: Sequence[int]) -> Iterable[int]:
        """Which of ``sequences`` the team's log holds (only called after a refused append).

        By default read off the window the sequences span; a driver may ask more directly.
        """
        wanted = set(sequences)
        rows = self._scan_events(
            team_id,
            after_sequence=min(wanted) - 1,
            before_sequence=max(wanted) + 1,
            limit=None,
            newest=False,
        )
        return [sequence for sequence, _ in rows if sequence in wanted]

    def _max_sequence(self, team_id: UUID) -> int:
        """The highest stored sequence of the team, ``0`` when its log is empty.

        By default the last event of the log; a driver may keep it cheaper.
        """
        rows = self._scan_events(
            team_id, after_sequence=None, before_sequence=None, limit=1, newest=True
        )
        return max((sequence for sequence, _ in rows), default=0)

    # -- primitives: writes -------------------------------------------------
    def _append(self, events: Sequence[PersistedEvent], epoch: int | None) -> None:
        """Append a non-empty batch atomically and durably, all of it or nothing.

        With ``epoch``, every team of the batch is fenced (:meth:`_check_epoch`
        with the epoch read in the write's own transaction). A sequence already
        stored, or repeated in the batch, stores nothing and raises
        :meth:`_duplicate`'s error.
        """
        raise NotImplementedError

    def _put_team(self, process: Process, epoch: int | None) -> None:
        """Insert or replace the record, fenced by ``epoch`` (:meth:`_check_epoch`).

        ``process`` already carries its metadata index and, when fenced, ``epoch``.
        """
        raise NotImplementedError

    def _put_state(self, snapshot: AgentStateSnapshot, epoch: int | None) -> None:
        """Insert or replace the state of ``(team_id, agent_id)``, fenced by ``epoch``."""
        raise NotImplementedError

    def _erase_team(self, team_id: UUID) -> None:
        """Remove the record, events and states of the team (an unknown team: nothing)."""
        raise NotImplementedError

    def _copy_from(
        self,
        source: UUID,
        target: UUID,
        first: int,
        last: int,
        rewrite: Callable[[Payload], Payload],
    ) -> int:
        """Append to ``target``'s log the events ``first..last`` of ``source``, each payload
        passed through ``rewrite``, in one atomic write (a fork's copy, page by page);
        returns how many were copied.

        By default read with :meth:`_scan_events`, decoded and written with
        :meth:`_append` (unfenced); a driver may copy inside the storage instead.
        """
        rows = self._scan_events(
            source, after_sequence=first - 1, before_sequence=last + 1, limit=None, newest=False
        )
        with shared_addresses():
            events = [
                decode_event(rewrite(payload), target, sequence) for sequence, payload in rows
            ]
        if events:
            self._append(events, None)
        return len(events)

    # -- primitives: ownership ------------------------------------------------
    def _cas_team(self, team_id: UUID, decide: Decide, hold: object | None) -> Process | None:
        """Read the record, write ``decide(record)`` in its place; return what was written.

        ``decide`` gets the decoded record (``None``: there is none) and returns
        the record to write (metadata index derived) or raises, which writes
        nothing. The read and the write must be one compare-and-set with respect
        to every fenced write and every other ``_cas_team``: a driver that locks
        (a transaction, a file lock) holds the record meanwhile; an optimistic
        one writes only if the record is unchanged and returns ``None`` when it
        changed (the base then reports the lost race).

        ``hold`` is ``None`` for a takeover and :meth:`_take_hold`'s object for a
        claim: a driver whose liveness lives in the record itself checks it here
        (raising ``claim_error`` for a live holder) and records ``hold`` with the
        write.
        """
        raise NotImplementedError

    def _take_hold(self, team_id: UUID, owner: TeamOwner) -> object | None:
        """Take this store's liveness hold on the team for a claim; ``None`` when a live
        holder (this store object or any other) has it.

        The returned object (anything but ``None``) is passed to :meth:`_cas_team`;
        the hold counts as this store's until :meth:`_release_hold`, which the
        base also calls when the claim then fails.
        """
        raise NotImplementedError

    def _release_hold(self, team_id: UUID) -> None:
        """Drop this store's hold on the team, if any (idempotent; the record is not written)."""
        raise NotImplementedError

    def _hold_alive(self, team_id: UUID) -> bool:
        """Whether a live holder (through this store object or any other) holds the team."""
        raise NotImplementedError

    def _check_integrity(self) -> list[str]:
        """The storage's own consistency check; one line per problem (``[]``: sound)."""
        raise NotImplementedError

    # -- events ---------------------------------------------------------------
    @_driven
    def save_event(self, event: PersistedEvent, *, epoch: int | None = None) -> None:
        """Append one event (``DuplicateEventError`` if its sequence is taken; fenced)."""
        self._check_open()
        self._append((event,), epoch)

    @_driven
    def save_events(self, events: Sequence[PersistedEvent], *, epoch: int | None = None) -> None:
        """Append several events atomically: all of them or none (fenced by ``epoch``)."""
        self._check_open()
        if events:
            self._append(events, epoch)

    @_driven
    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of the team, by ascending sequence."""
        self._check_open()
        return self._decode_events(
            team_id,
            self._scan_events(
                team_id, after_sequence=None, before_sequence=None, limit=None, newest=False
            ),
        )

    @_driven
    def load_events_page(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None = None,
        before_sequence: int | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> list[PersistedEvent]:
        """A window of the log by ascending sequence (see ``PagedEventStore``)."""
        check_page(after_sequence, before_sequence, limit)
        self._check_open()
        rows = self._scan_events(
            team_id,
            after_sequence=after_sequence,
            before_sequence=before_sequence,
            limit=limit,
            newest=newest,
        )
        return self._decode_events(team_id, rows)

    @staticmethod
    def _decode_events(team_id: UUID, rows: Iterable[tuple[int, Payload]]) -> list[PersistedEvent]:
        with shared_addresses():
            return [decode_event(payload, team_id, sequence) for sequence, payload in rows]

    @_driven
    def scan_raw_events(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None = None,
        before_sequence: int | None = None,
        limit: int | None = None,
    ) -> list[tuple[int, Payload]]:
        """``(sequence, payload as stored)`` of a window of the log, ascending, undecoded."""
        check_page(after_sequence, before_sequence, limit)
        self._check_open()
        return list(
            self._scan_events(
                team_id,
                after_sequence=after_sequence,
                before_sequence=before_sequence,
                limit=limit,
                newest=False,
            )
        )

    @_driven
    def copy_events(
        self,
        source: UUID,
        target: UUID,
        *,
        first: int,
        last: int,
        rewrite: Callable[[Payload], Payload],
    ) -> None:
        """Append ``source``'s events ``first..last``, rewritten, to ``target``'s log (atomic).

        What a fork copies with, one page at a time (see :mod:`akgentic.team.fork`);
        a sequence already stored in ``target`` raises ``DuplicateEventError``, and a
        window of ``source`` missing an event (deleted meanwhile) raises
        ``EventLogUnreadableError`` (the fork then removes its partial copy).
        """
        self._check_open()
        if first > last:
            return
        copied = self._copy_from(source, target, first, last, rewrite)
        if copied != last - first + 1:
            raise EventLogUnreadableError(
                f"team {source}'s events {first} to {last} are not all there any more "
                f"({copied} found): it was deleted or damaged while being forked"
            )

    @_driven
    def get_max_sequence(self, team_id: UUID) -> int:
        """Highest stored sequence of the team, 0 when it has no event."""
        self._check_open()
        return self._max_sequence(team_id)

    # -- teams ----------------------------------------------------------------
    @_driven
    def save_team(self, process: Process, *, epoch: int | None = None) -> None:
        """Upsert the team record, its metadata index derived again (fenced by ``epoch``)."""
        self._check_open()
        if epoch is None:
            self._put_team(indexed(process), None)
        else:
            self._put_team(indexed(process, epoch=epoch), epoch)

    @_driven
    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, ``None`` if unknown (``TeamRecordUnreadableError`` if corrupt)."""
        self._check_open()
        record = self._read_team(team_id)
        return None if record is None else decode_process(record, str(team_id))

    @_driven
    def load_raw_team(self, team_id: UUID) -> RawTeam:
        """What the store holds of a team as stored, no class imported (for checks)."""
        self._check_open()
        return RawTeam(
            record=self._read_team(team_id),
            events=list(
                self._scan_events(
                    team_id, after_sequence=None, before_sequence=None, limit=None, newest=False
                )
            ),
            states=list(self._read_states(team_id)),
        )

    @_driven
    def delete_team(self, team_id: UUID) -> None:
        """Remove the record, events and states of one team (no error if unknown)."""
        self._check_open()
        self._erase_team(team_id)

    @_driven
    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only, AND), oldest first."""
        self._check_open()
        wanted = None if status is None else TeamStatus(status)
        entries = metadata_filter_entries(metadata)
        rows = self._scan_teams(user_id, wanted, entries)
        found = matching_teams(rows, user_id, wanted, entries, self._logger)
        found.sort(key=lambda p: (_as_utc(p.created_at), str(p.team_id)))
        return found

    @_driven
    def stored_team_ids(self) -> set[UUID]:
        """Every team id with a record, an event or a state (orphans included)."""
        self._check_open()
        found: set[UUID] = set()
        for value in self._stored_keys():
            try:
                found.add(value if isinstance(value, UUID) else UUID(str(value)))
            except ValueError:
                self._logger.warning("%r holds data of team %r, not a team id", self, value)
        return found

    # -- agent states -----------------------------------------------------------
    @_driven
    def save_agent_state(self, snapshot: AgentStateSnapshot, *, epoch: int | None = None) -> None:
        """Upsert the latest state of ``(team_id, agent_id)`` (fenced by ``epoch``)."""
        self._check_open()
        self._put_state(snapshot, epoch)

    @_driven
    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """Every agent snapshot of the team, ordered by agent id."""
        self._check_open()
        return [
            decode_state(payload, team_id, agent_id)
            for agent_id, payload in self._read_states(team_id)
        ]

    # -- ownership --------------------------------------------------------------
    @_driven
    def claim_team(
        self, team_id: UUID, owner: TeamOwner, *, create: Process | None = None
    ) -> Process:
        """Claim ``team_id`` for ``owner`` (see ``EventStore.claim_team``)."""
        self._check_open()
        hold = self._take_hold(team_id, owner)
        if hold is None:
            raise claim_error(team_id, self.load_team(team_id))

        def claimed(current: Process | None) -> Process:
            if create is not None:
                if current is not None:
                    raise TeamStateError(team_id, "exists", f"team {team_id} already exists")
                return indexed(create, team_id=team_id, owner=owner, epoch=1)
            if current is None:
                raise TeamNotFoundError(team_id)
            return indexed(current, owner=owner, epoch=current.epoch + 1, updated_at=utc_now())

        try:
            written = self._cas_team(team_id, claimed, hold)
            if written is None:  # another claimant wrote the record first
                raise claim_error(team_id, self.load_team(team_id))
        except BaseException:
            self._release_hold(team_id)
            raise
        return written

    @_driven
    def take_over_team(self, team_id: UUID, owner: TeamOwner, *, epoch: int) -> Process:
        """Bump the epoch from ``epoch`` for ``owner``, held or not (``TakeoverEventStore``)."""
        self._check_open()

        def taken(current: Process | None) -> Process:
            if current is None:
                raise TeamNotFoundError(team_id)
            if current.epoch != epoch:
                raise TeamClaimLostError(team_id, epoch, current.epoch)
            return indexed(current, owner=owner, epoch=epoch + 1, updated_at=utc_now())

        written = self._cas_team(team_id, taken, None)
        if written is None:  # a claim or another takeover wrote the record first
            current = self.load_team(team_id)
            raise TeamClaimLostError(team_id, epoch, None if current is None else current.epoch)
        return written

    @_driven
    def release_team(self, team_id: UUID) -> None:
        """Drop this store's hold on a team it claimed (idempotent)."""
        self._release_hold(team_id)

    @_driven
    def claim_held(self, team_id: UUID) -> bool:
        """Whether a live owner (through this store object or any other) holds the team."""
        return self._hold_alive(team_id)

    @_driven
    def check_integrity(self) -> list[str]:
        """The storage's own consistency check; each problem found as one line."""
        self._check_open()
        return self._check_integrity()
