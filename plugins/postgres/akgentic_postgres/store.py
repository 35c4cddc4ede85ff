"""PostgresEventStore: team records, event logs and agent states in PostgreSQL.

Guarantees (checked by :class:`akgentic.testing.EventStoreContract` and this
plugin's tests):

* **Acknowledged means committed.** Every method runs one transaction that is
  committed before it returns (with the server's default
  ``synchronous_commit=on`` the commit is flushed to the WAL), so a process
  killed right after a call finds the write from any other process.
* **One sequence, one event.** The primary key on ``(team_id, sequence)``
  refuses a second write of a sequence, whichever process or thread tries it;
  the store answers :class:`~akgentic.team.errors.DuplicateEventError`.
  ``save_events`` is one ``COPY`` inside one transaction: all or nothing.
* **Bound parameters only.** Every value reaching SQL (ids, user ids,
  metadata filter entries) is a bound parameter; a metadata filter is one
  ``metadata_indexes @> %s::text[]`` term served by a GIN index.
* **Cascade delete in one transaction** over the three tables.
* **Streamed resume.** ``load_events`` reads a short log in one query and a
  long one (a chunk or more) through a server-side cursor, in chunks.

* **One owner per team.** ``claim_team`` takes a session-level advisory lock
  (keyed by schema and team id) on a connection of its own, kept open while
  the claim lasts: PostgreSQL drops the lock when that session ends, a killed
  process included, so a dead owner's team can be claimed again at once. A
  released claim's session is unlocked and kept for the next claim. The
  claim bumps the record's ``epoch`` under ``SELECT ... FOR UPDATE``; a fenced
  write reads the epoch ``FOR SHARE`` in its own transaction, so no write of
  an older owner commits after a newer claim. ``claim_held`` reads
  ``pg_locks`` rather than taking the lock, so a probe never makes a racing
  claim find a free team owned.

Connections come from a ``psycopg_pool.ConnectionPool``; one store object is
safe to share between threads, and any number of processes may open stores on
the same database.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from psycopg import Connection, errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from akgentic.plugin_api import (
    AgentStateSnapshot,
    ClosingStore,
    DuplicateEventError,
    EventStoreError,
    InvalidStoreURLError,
    PersistedEvent,
    Process,
    RawTeam,
    TeamClaimLostError,
    TeamNotFoundError,
    TeamOwner,
    TeamStateError,
    TeamStatus,
    check_page,
    claim_error,
    decode_event,
    decode_process,
    decode_state,
    derive_metadata_indexes,
    encode_event,
    encode_process,
    encode_state,
    matching_teams,
    metadata_filter_entries,
    utc_now,
)
from akgentic_postgres.errors import SchemaNotInitialisedError, StoreUnavailableError
from akgentic_postgres.schema import SCHEMA_VERSION, Tables, create_schema, installed_version
from akgentic_postgres.url import PostgresURL, parse_postgres_url

__all__ = ["PostgresEventStore", "init_schema"]

logger = logging.getLogger(__name__)

#: Rows fetched per round trip when a log is streamed back.
STREAM_CHUNK = 2000
#: An upper bound above every sequence (the column is a 64-bit integer).
_NO_BOUND = 2**63 - 1
_EVENTS_PKEY = "akgentic_events_pkey"
#: Seconds a claim waits for the server to drop the lock of a killed local owner.
_DEAD_OWNER_GRACE = 3.0
#: Whether a session of this database holds the advisory lock of a 64-bit key, given as
#: its high and low halves (how ``pg_locks`` shows a one-key advisory lock).
_LOCK_HELD = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND classid = %s::bigint::oid AND objid = %s::bigint::oid AND objsubid = 1)"
)


def _connect(target: PostgresURL) -> Connection[Any]:
    try:
        conninfo_to_dict(target.conninfo)
    except psycopg.ProgrammingError as exc:
        raise InvalidStoreURLError(
            f"{target.display} is not a valid PostgreSQL URL: {str(exc).strip()}"
        ) from None
    try:
        return psycopg.connect(target.conninfo, autocommit=True)
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot connect to PostgreSQL at {target.display}: {str(exc).strip()}"
        ) from exc


def init_schema(url: str) -> None:
    """Create the store's schema, tables and indexes if missing (idempotent).

    Used by ``akgentic store init URL`` and ``python -m akgentic_postgres.init``.
    """
    target = parse_postgres_url(url)
    with _connect(target) as conn:
        try:
            create_schema(conn, Tables.in_schema(target.schema))
        except psycopg.Error as exc:
            raise EventStoreError(
                f"cannot initialise the event store at {target.display}: {str(exc).strip()}"
            ) from exc


def _claim_key(schema: str | None, team_id: UUID) -> int:
    """The signed 64-bit advisory lock key of one team in one schema."""
    digest = hashlib.blake2b(f"akgentic:{schema or ''}:{team_id}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


def _end_session(conn: Connection[Any]) -> None:
    """Drop a claim session's advisory locks now, then close it (never raises)."""
    try:
        if not conn.closed:
            conn.execute("SELECT pg_advisory_unlock_all()")
    except psycopg.Error as exc:
        logger.debug("unlocking a claim session failed: %s", exc)
    finally:
        conn.close()


def _event_type(event: PersistedEvent) -> str:
    kind = type(event.event)
    return f"{kind.__module__}.{kind.__name__}"


class PostgresEventStore(ClosingStore):
    """Event store in a PostgreSQL database (see the module docstring for guarantees).

    Open it with :meth:`from_url`; the database must have been initialised
    once with :func:`init_schema` (``akgentic store init URL``).
    """

    def __init__(self, target: PostgresURL) -> None:
        self.target = target
        self.tables = Tables.in_schema(target.schema)
        with _connect(target) as conn:
            try:
                version = installed_version(conn, self.tables)
            except psycopg.Error as exc:
                raise StoreUnavailableError(
                    f"cannot read the event store schema at {target.display}: {exc}"
                ) from exc
        where = f" (schema {target.schema!r})" if target.schema else ""
        if version is None:
            raise SchemaNotInitialisedError(
                f"the PostgreSQL database at {target.display}{where} holds no akgentic event "
                "store yet; initialise it once with `akgentic store init <URL>` or "
                "`DB_CONN_STRING_PERSISTENCE=<URL> python -m akgentic_postgres.init`"
            )
        if version > SCHEMA_VERSION:
            raise EventStoreError(
                f"the event store at {target.display}{where} has schema version {version}, "
                f"newer than this akgentic-postgres understands ({SCHEMA_VERSION}); upgrade it"
            )
        self._pool: ConnectionPool[Connection[Any]] | None = ConnectionPool(
            target.conninfo,
            kwargs={"autocommit": True},
            min_size=target.pool_min_size,
            max_size=target.pool_max_size,
            timeout=target.pool_timeout,
            name="akgentic-postgres",
            open=True,
        )
        self._claims: dict[UUID, Connection[Any]] = {}
        # Sessions of released claims, unlocked and kept for the next claim: opening a
        # connection per claim costs a server backend each time (a worker placing
        # hundreds of teams paid it once per team).
        self._spare_sessions: list[Connection[Any]] = []
        self._claims_lock = threading.Lock()
        t = self.tables
        self._epoch_of = t.sql(
            "SELECT (payload->>'epoch')::bigint FROM {teams} WHERE team_id = %s FOR SHARE"
        )
        self._first_events = t.sql(
            "SELECT sequence, payload::text FROM {events} WHERE team_id = %s"
            " ORDER BY sequence LIMIT %s"
        )
        self._insert_event = t.sql(
            "INSERT INTO {events} (team_id, sequence, event_type, timestamp, payload) "
            "VALUES (%s, %s, %s, %s, %s::jsonb)"
        )
        self._copy_events = t.sql(
            "COPY {events} (team_id, sequence, event_type, timestamp, payload) FROM STDIN"
        )

    # -- construction -----------------------------------------------------
    @classmethod
    def from_url(cls, url: str) -> PostgresEventStore:
        """Open ``postgresql://user@host:5432/db?schema=...`` (see :mod:`akgentic_postgres.url`)."""
        return cls(parse_postgres_url(url))

    @classmethod
    def init_url(cls, url: str) -> None:
        """Create the schema the URL names if missing (idempotent)."""
        init_schema(url)

    @contextmanager
    def _connection(self) -> Iterator[Connection[Any]]:
        """A pooled connection; driver failures become :class:`EventStoreError` subclasses."""
        pool = self._pool
        if pool is None:
            raise EventStoreError("this PostgresEventStore is closed")
        try:
            with pool.connection() as conn:
                yield conn
        except (PoolTimeout, PoolClosed, psycopg.OperationalError) as exc:
            raise StoreUnavailableError(
                f"PostgreSQL at {self.target.display} is unavailable: {str(exc).strip()}"
            ) from exc
        except errors.UntranslatableCharacter as exc:
            raise EventStoreError(
                f"PostgreSQL refused a value (JSONB cannot hold a NUL character): {exc}"
            ) from exc

    def _check_epoch(self, conn: Connection[Any], team_id: UUID, epoch: int | None) -> None:
        """Inside a transaction: refuse unless the record holds ``epoch`` (row share-locked)."""
        if epoch is None:
            return
        row = conn.execute(self._epoch_of, (team_id,), prepare=True).fetchone()
        current = None if row is None else int(row[0] or 0)
        if current != epoch:
            raise TeamClaimLostError(team_id, epoch, current)

    # -- events -----------------------------------------------------------
    def save_event(self, event: PersistedEvent, *, epoch: int | None = None) -> None:
        """Append one event (``DuplicateEventError`` if its sequence is taken; fenced by epoch)."""
        row = (
            event.team_id,
            event.sequence,
            _event_type(event),
            event.timestamp,
            encode_event(event),
        )
        try:
            with self._connection() as conn, conn.transaction():
                self._check_epoch(conn, event.team_id, epoch)
                conn.execute(self._insert_event, row, prepare=True)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name != _EVENTS_PKEY:
                raise
            raise DuplicateEventError(event.team_id, event.sequence) from None

    def save_events(self, events: Sequence[PersistedEvent], *, epoch: int | None = None) -> None:
        """Append several events with one ``COPY`` in one transaction: all or none."""
        if not events:
            return
        seen: set[tuple[UUID, int]] = set()
        for event in events:
            key = (event.team_id, event.sequence)
            if key in seen:
                raise DuplicateEventError(*key)
            seen.add(key)
        rows = [
            (e.team_id, e.sequence, _event_type(e), e.timestamp, encode_event(e)) for e in events
        ]
        try:
            with self._connection() as conn, conn.transaction():
                for team_id in {event.team_id for event in events}:
                    self._check_epoch(conn, team_id, epoch)
                with conn.cursor() as cur, cur.copy(self._copy_events) as copy:
                    for row in rows:
                        copy.write_row(row)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name != _EVENTS_PKEY:
                raise
            raise self._taken(events) from None

    def _taken(self, events: Sequence[PersistedEvent]) -> DuplicateEventError:
        """The error naming the first event of ``events`` whose sequence is already stored."""
        teams = sorted({e.team_id for e in events}, key=str)
        taken: set[tuple[UUID, int]] = set()
        with self._connection() as conn:
            for team_id in teams:
                sequences = [e.sequence for e in events if e.team_id == team_id]
                rows = conn.execute(
                    self.tables.sql(
                        "SELECT sequence FROM {events} WHERE team_id = %s AND sequence = ANY(%s)"
                    ),
                    (team_id, sequences),
                ).fetchall()
                taken.update((team_id, int(row[0])) for row in rows)
        for event in events:
            if (event.team_id, event.sequence) in taken:
                return DuplicateEventError(event.team_id, event.sequence)
        first = events[0]  # taken by a writer whose transaction has since rolled back
        return DuplicateEventError(first.team_id, first.sequence)

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of the team by ascending sequence.

        A log shorter than a chunk (most, and every one a fleet worker adopts
        right after its creation) is one plain query; a longer one is read again
        through a server-side cursor, in chunks, from one snapshot.
        """
        with self._connection() as conn:
            rows = conn.execute(
                self._first_events, (team_id, STREAM_CHUNK), prepare=True
            ).fetchall()
        if len(rows) < STREAM_CHUNK:
            return [decode_event(payload, team_id, int(sequence)) for sequence, payload in rows]
        loaded: list[PersistedEvent] = []
        query = self.tables.sql(
            "SELECT sequence, payload::text FROM {events} WHERE team_id = %s ORDER BY sequence"
        )
        with (
            self._connection() as conn,
            conn.transaction(),
            conn.cursor(name="akgentic_load_events") as cur,
        ):
            cur.itersize = STREAM_CHUNK
            cur.execute(query, (team_id,))
            for sequence, payload in cur:
                loaded.append(decode_event(payload, team_id, sequence))
        return loaded

    def load_events_page(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None = None,
        before_sequence: int | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> list[PersistedEvent]:
        """A window of the log by ascending sequence: one range scan of the primary key."""
        check_page(after_sequence, before_sequence, limit)
        order = "DESC" if newest else "ASC"
        query = self.tables.sql(
            "SELECT sequence, payload::text FROM {events} WHERE team_id = %s"
            " AND sequence > %s AND sequence < %s ORDER BY sequence " + order + " LIMIT %s"
        )
        params = (
            team_id,
            -1 if after_sequence is None else after_sequence,
            _NO_BOUND if before_sequence is None else before_sequence,
            limit,  # LIMIT NULL is no limit
        )
        with self._connection() as conn:
            rows = conn.execute(query, params).fetchall()
        if newest:
            rows.reverse()
        return [decode_event(payload, team_id, int(sequence)) for sequence, payload in rows]

    def get_max_sequence(self, team_id: UUID) -> int:
        """Highest stored sequence of the team, 0 when it has no event."""
        with self._connection() as conn:
            row = conn.execute(
                self.tables.sql(
                    "SELECT COALESCE(MAX(sequence), 0) FROM {events} WHERE team_id = %s"
                ),
                (team_id,),
            ).fetchone()
        return 0 if row is None else int(row[0])

    # -- teams ------------------------------------------------------------
    def save_team(self, process: Process, *, epoch: int | None = None) -> None:
        """Upsert the team record; its metadata index is derived again (fenced by ``epoch``)."""
        with self._connection() as conn, conn.transaction():
            if epoch is not None:
                process = process.model_copy(update={"epoch": epoch})
                row = conn.execute(
                    self.tables.sql(
                        "SELECT (payload->>'epoch')::bigint FROM {teams} WHERE team_id = %s "
                        "FOR UPDATE"
                    ),
                    (process.team_id,),
                ).fetchone()
                current = None if row is None else int(row[0] or 0)
                if current != epoch:
                    raise TeamClaimLostError(process.team_id, epoch, current)
            self._write_team(conn, process)

    def _write_team(self, conn: Connection[Any], process: Process) -> None:
        entries = derive_metadata_indexes(process.metadata)
        process = process.model_copy(update={"metadata_indexes": entries})
        conn.execute(
            self.tables.sql(
                "INSERT INTO {teams} (team_id, user_id, status, created_at, updated_at, "
                "metadata_indexes, payload) VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb) "
                "ON CONFLICT (team_id) DO UPDATE SET user_id = excluded.user_id, "
                "status = excluded.status, created_at = excluded.created_at, "
                "updated_at = excluded.updated_at, "
                "metadata_indexes = excluded.metadata_indexes, payload = excluded.payload"
            ),
            (
                process.team_id,
                process.user_id,
                str(process.status.value),
                process.created_at,
                process.updated_at,
                entries,
                encode_process(process),
            ),
        )

    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, ``None`` if unknown (``TeamRecordUnreadableError`` if corrupt)."""
        with self._connection() as conn:
            row = conn.execute(
                self.tables.sql("SELECT payload::text FROM {teams} WHERE team_id = %s"),
                (team_id,),
            ).fetchone()
        return None if row is None else decode_process(row[0], str(team_id))

    def load_raw_team(self, team_id: UUID) -> RawTeam:
        """The team's record, events and states as stored text, no class imported (checks)."""
        with self._connection() as conn:
            record = conn.execute(
                self.tables.sql("SELECT payload::text FROM {teams} WHERE team_id = %s"),
                (team_id,),
            ).fetchone()
            events = conn.execute(
                self.tables.sql(
                    "SELECT sequence, payload::text FROM {events} WHERE team_id = %s "
                    "ORDER BY sequence"
                ),
                (team_id,),
            ).fetchall()
            states = conn.execute(
                self.tables.sql(
                    "SELECT agent_id, payload::text FROM {agent_states} WHERE team_id = %s "
                    "ORDER BY agent_id"
                ),
                (team_id,),
            ).fetchall()
        return RawTeam(
            record=None if record is None else str(record[0]),
            events=[(int(sequence), str(payload)) for sequence, payload in events],
            states=[(str(agent_id), str(payload)) for agent_id, payload in states],
        )

    def delete_team(self, team_id: UUID) -> None:
        """Remove the team's states, events and record in one transaction (no error if unknown)."""
        with self._connection() as conn, conn.transaction():
            for table in (self.tables.agent_states, self.tables.events, self.tables.teams):
                conn.execute(f"DELETE FROM {table} WHERE team_id = %s", (team_id,))

    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only, AND), oldest first.

        ``user_id``, ``status`` and the metadata containment term are all in
        the same ``WHERE`` clause, each value a bound parameter.
        """
        entries = metadata_filter_entries(metadata)
        if any("\x00" in text for text in (user_id or "", *entries)):
            return []  # PostgreSQL text never holds NUL, so no stored team can match
        clauses: list[str] = []
        params: list[object] = []
        if user_id is not None:
            clauses.append("user_id = %s")
            params.append(str(user_id))
        if status is not None:
            clauses.append("status = %s")
            params.append(str(TeamStatus(status).value))
        if entries:
            clauses.append("metadata_indexes @> %s::text[]")
            params.append(entries)
        query = "SELECT team_id, payload::text FROM {teams}"
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        query += " ORDER BY created_at, team_id"
        with self._connection() as conn:
            rows = conn.execute(self.tables.sql(query), params).fetchall()
        return matching_teams(rows, user_id, status, entries, logger)

    # -- agent states -----------------------------------------------------
    def save_agent_state(self, snapshot: AgentStateSnapshot, *, epoch: int | None = None) -> None:
        """Upsert the latest state of ``(team_id, agent_id)`` (fenced by ``epoch``)."""
        with self._connection() as conn, conn.transaction():
            self._check_epoch(conn, snapshot.team_id, epoch)
            conn.execute(
                self.tables.sql(
                    "INSERT INTO {agent_states} (team_id, agent_id, name, updated_at, payload) "
                    "VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT (team_id, agent_id) "
                    "DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at, "
                    "payload = excluded.payload"
                ),
                (
                    snapshot.team_id,
                    snapshot.agent_id,
                    snapshot.name,
                    snapshot.updated_at,
                    encode_state(snapshot),
                ),
            )

    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """Every agent snapshot of the team, ordered by agent id."""
        with self._connection() as conn:
            rows = conn.execute(
                self.tables.sql(
                    "SELECT agent_id, payload::text FROM {agent_states} WHERE team_id = %s "
                    "ORDER BY agent_id"
                ),
                (team_id,),
            ).fetchall()
        return [decode_state(payload, team_id, agent_id) for agent_id, payload in rows]

    # -- claims and checks ------------------------------------------------
    def claim_team(
        self, team_id: UUID, owner: TeamOwner, *, create: Process | None = None
    ) -> Process:
        """Claim ``team_id`` for ``owner`` (see ``EventStore.claim_team``)."""
        if self._pool is None:
            raise EventStoreError("this PostgresEventStore is closed")
        with self._claims_lock:
            if team_id in self._claims:
                raise claim_error(team_id, self.load_team(team_id))
        key = _claim_key(self.target.schema, team_id)
        conn = self._claim_session()
        try:
            if not self._try_lock(conn, key, team_id):
                raise claim_error(team_id, self.load_team(team_id))
            with conn.transaction():
                found = conn.execute(
                    self.tables.sql(
                        "SELECT payload::text FROM {teams} WHERE team_id = %s FOR UPDATE"
                    ),
                    (team_id,),
                ).fetchone()
                if create is not None:
                    if found is not None:
                        raise TeamStateError(team_id, "exists", f"team {team_id} already exists")
                    claimed = create.model_copy(
                        update={"team_id": team_id, "owner": owner, "epoch": 1}
                    )
                else:
                    if found is None:
                        raise TeamNotFoundError(team_id)
                    record = decode_process(found[0], str(team_id))
                    claimed = record.model_copy(
                        update={"owner": owner, "epoch": record.epoch + 1, "updated_at": utc_now()}
                    )
                self._write_team(conn, claimed)
            with self._claims_lock:
                self._claims[team_id] = conn
        except psycopg.Error as exc:
            _end_session(conn)
            raise StoreUnavailableError(
                f"claiming team {team_id} at {self.target.display} failed: {str(exc).strip()}"
            ) from exc
        except BaseException:
            _end_session(conn)
            raise
        return claimed

    def take_over_team(self, team_id: UUID, owner: TeamOwner, *, epoch: int) -> Process:
        """Bump the epoch from ``epoch`` for ``owner``, live holder or not (``TakeoverEventStore``).

        No advisory lock is taken or kept: the caller's placement lease stands
        for liveness; the epoch fences every older owner's writes.
        """
        with self._connection() as conn, conn.transaction():
            found = conn.execute(
                self.tables.sql("SELECT payload::text FROM {teams} WHERE team_id = %s FOR UPDATE"),
                (team_id,),
            ).fetchone()
            if found is None:
                raise TeamNotFoundError(team_id)
            record = decode_process(found[0], str(team_id))
            if record.epoch != epoch:
                raise TeamClaimLostError(team_id, epoch, record.epoch)
            claimed = record.model_copy(
                update={"owner": owner, "epoch": record.epoch + 1, "updated_at": utc_now()}
            )
            self._write_team(conn, claimed)
        return claimed

    def _try_lock(self, conn: Connection[Any], key: int, team_id: UUID) -> bool:
        """Take the advisory lock; wait briefly while its holder is a dead local process.

        The server drops a killed client's locks once it notices the closed
        socket, a moment after the kill: an owner recorded on this host whose
        process is gone is given that moment instead of being reported as live.
        """
        deadline = time.monotonic() + _DEAD_OWNER_GRACE
        while True:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if row is not None and row[0]:
                return True
            record = self.load_team(team_id)
            owner = record.owner if record is not None else None
            if owner is None or owner.process_alive() is not False:
                return False
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    def release_team(self, team_id: UUID) -> None:
        """Unlock the claim's session (kept for a later claim, or closed)."""
        with self._claims_lock:
            conn = self._claims.pop(team_id, None)
        if conn is not None:
            self._spare_session(conn)

    def _claim_session(self) -> Connection[Any]:
        """A session for a new claim: a spare one that is still healthy, or a new one."""
        while True:
            with self._claims_lock:
                conn = self._spare_sessions.pop() if self._spare_sessions else None
            if conn is None:
                return _connect(self.target)
            if not conn.closed and conn.info.transaction_status == TransactionStatus.IDLE:
                return conn
            conn.close()

    def _spare_session(self, conn: Connection[Any]) -> None:
        """Drop every lock of a claim session, then keep it spare or close it (never raises)."""
        try:
            if conn.closed:
                return
            conn.execute("SELECT pg_advisory_unlock_all()")
        except psycopg.Error as exc:
            logger.debug("unlocking a claim session failed: %s", exc)
            conn.close()
            return
        with self._claims_lock:
            if self._pool is not None and len(self._spare_sessions) < self.target.pool_max_size:
                self._spare_sessions.append(conn)
                return
        conn.close()

    def claim_held(self, team_id: UUID) -> bool:
        """Whether any session holds the team's advisory lock, read from ``pg_locks``.

        The lock is looked at, never taken: a probe that took it for a moment would
        make a claim racing it find the team owned while nobody runs it.
        """
        with self._claims_lock:
            if team_id in self._claims:
                return True
        key = _claim_key(self.target.schema, team_id) & 0xFFFF_FFFF_FFFF_FFFF
        with self._connection() as conn:
            row = conn.execute(_LOCK_HELD, (key >> 32, key & 0xFFFF_FFFF)).fetchone()
        return bool(row is not None and row[0])

    def stored_team_ids(self) -> set[UUID]:
        """Team ids found in any of the three tables."""
        with self._connection() as conn:
            rows = conn.execute(
                self.tables.sql(
                    "SELECT team_id FROM {teams} UNION SELECT team_id FROM {events} "
                    "UNION SELECT team_id FROM {agent_states}"
                )
            ).fetchall()
        return {UUID(str(row[0])) for row in rows}

    def check_integrity(self) -> list[str]:
        """Constraint scan: unvalidated constraints and rows whose columns contradict payloads."""
        t = self.tables
        checks = (
            (
                "constraint(s) not validated",
                "SELECT conname FROM pg_constraint WHERE NOT convalidated AND conrelid IN "
                "(to_regclass(%s), to_regclass(%s), to_regclass(%s))",
                (t.teams, t.events, t.agent_states),
            ),
            (
                "team rows whose payload names another team or status",
                t.sql(
                    "SELECT team_id::text FROM {teams} WHERE payload->>'team_id' <> team_id::text "
                    "OR payload->>'status' <> status"
                ),
                (),
            ),
            (
                "event rows whose payload names another team or sequence",
                t.sql(
                    "SELECT team_id::text || ':' || sequence FROM {events} "
                    "WHERE payload->>'team_id' <> team_id::text "
                    "OR (payload->>'sequence')::bigint <> sequence"
                ),
                (),
            ),
            (
                "state rows whose payload names another team or agent",
                t.sql(
                    "SELECT team_id::text || ':' || agent_id FROM {agent_states} "
                    "WHERE payload->>'team_id' <> team_id::text OR payload->>'agent_id' <> agent_id"
                ),
                (),
            ),
        )
        problems: list[str] = []
        with self._connection() as conn:
            for what, query, params in checks:
                rows = conn.execute(query, params).fetchall()
                if rows:
                    shown = ", ".join(str(r[0]) for r in rows[:5])
                    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
                    problems.append(f"{len(rows)} {what}: {shown}{more}")
        return problems

    # -- lifecycle --------------------------------------------------------
    def close(self) -> None:
        """Close the connection pool and end every claim's session (idempotent)."""
        with self._claims_lock:
            claims, self._claims = self._claims, {}
            spare, self._spare_sessions = self._spare_sessions, []
            pool, self._pool = self._pool, None
        for conn in claims.values():
            _end_session(conn)
        for conn in spare:
            conn.close()
        if pool is not None:
            pool.close()

    def __repr__(self) -> str:
        return f"PostgresEventStore({self.target.display!r})"
