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
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from threading import Lock
from typing import Any
from uuid import UUID

import psycopg
from psycopg import Connection, errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from akgentic.plugin_api import (
    AgentStateSnapshot,
    Decide,
    DuplicateEventError,
    EventStoreError,
    InvalidStoreURLError,
    Payload,
    PersistedEvent,
    Process,
    StoreBase,
    TeamStatus,
    decode_process,
    encode_event,
    encode_process,
    encode_state,
    repeated_event,
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


class PostgresEventStore(StoreBase):
    """Event store in a PostgreSQL database (see the module docstring for guarantees).

    Open it with :meth:`from_url`; the database must have been initialised
    once with :func:`init_schema` (``akgentic store init URL``). The claim and
    epoch policy is :class:`~akgentic.team.stores.StoreBase`'s; this class is
    its driver.
    """

    _logger = logger

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
        self._claims_lock = Lock()
        t = self.tables
        epoch_of = "SELECT (payload->>'epoch')::bigint FROM {teams} WHERE team_id = %s FOR "
        self._epoch_of = {False: t.sql(epoch_of + "SHARE"), True: t.sql(epoch_of + "UPDATE")}
        self._first_events = t.sql(
            "SELECT sequence, payload::text FROM {events} WHERE team_id = %s"
            " ORDER BY sequence LIMIT %s"
        )
        self._insert_event = t.sql(
            "INSERT INTO {events} (team_id, sequence, event_type, timestamp, payload) "
            "VALUES (%s, %s, %s, %s, %s::jsonb)"
        )
        self._all_events = t.sql(
            "SELECT sequence, payload::text FROM {events} WHERE team_id = %s ORDER BY sequence"
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

    def _fence(
        self, conn: Connection[Any], team_id: UUID, epoch: int | None, exclusive: bool = False
    ) -> None:
        """Inside a transaction: refuse unless the record holds ``epoch`` (row locked)."""
        if epoch is not None:
            row = conn.execute(self._epoch_of[exclusive], (team_id,), prepare=True).fetchone()
            self._check_epoch(team_id, epoch, None if row is None else int(row[0] or 0))

    # -- primitives: reads --------------------------------------------------
    def _read_team(self, team_id: UUID) -> Payload | None:
        with self._connection() as conn:
            row = conn.execute(
                self.tables.sql("SELECT payload::text FROM {teams} WHERE team_id = %s"),
                (team_id,),
            ).fetchone()
        return None if row is None else str(row[0])

    def _scan_events(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None,
        before_sequence: int | None,
        limit: int | None,
        newest: bool,
    ) -> Iterator[tuple[int, Payload]]:
        """A window is one range scan of the primary key. The whole log of a short
        team (most, and every one a fleet worker adopts right after its creation) is
        one plain query; a longer one is read again through a server-side cursor, in
        chunks, from one snapshot."""
        if after_sequence is None and before_sequence is None and limit is None:
            with self._connection() as conn:
                rows = conn.execute(
                    self._first_events, (team_id, STREAM_CHUNK), prepare=True
                ).fetchall()
            if len(rows) < STREAM_CHUNK:
                yield from rows
                return
            with (
                self._connection() as conn,
                conn.transaction(),
                conn.cursor(name="akgentic_load_events") as cur,
            ):
                cur.itersize = STREAM_CHUNK
                cur.execute(self._all_events, (team_id,))
                yield from cur
            return
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
        yield from reversed(rows) if newest else rows

    def _read_states(self, team_id: UUID) -> list[tuple[str, Payload]]:
        with self._connection() as conn:
            return conn.execute(
                self.tables.sql(
                    "SELECT agent_id, payload::text FROM {agent_states} WHERE team_id = %s "
                    "ORDER BY agent_id"
                ),
                (team_id,),
            ).fetchall()

    def _scan_teams(
        self, user_id: str | None, status: TeamStatus | None, entries: Sequence[str]
    ) -> list[tuple[Any, Payload]]:
        """``user_id``, ``status`` and the metadata containment term in one ``WHERE``."""
        if any("\x00" in text for text in (user_id or "", *entries)):
            return []  # PostgreSQL text never holds NUL, so no stored team can match
        clauses: list[str] = []
        params: list[object] = []
        if user_id is not None:
            clauses.append("user_id = %s")
            params.append(str(user_id))
        if status is not None:
            clauses.append("status = %s")
            params.append(str(status.value))
        if entries:
            clauses.append("metadata_indexes @> %s::text[]")
            params.append(list(entries))
        query = "SELECT team_id, payload::text FROM {teams}"
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        with self._connection() as conn:
            return conn.execute(
                self.tables.sql(query + " ORDER BY created_at, team_id"), params
            ).fetchall()

    def _stored_keys(self) -> list[Any]:
        with self._connection() as conn:
            rows = conn.execute(
                self.tables.sql(
                    "SELECT team_id FROM {teams} UNION SELECT team_id FROM {events} "
                    "UNION SELECT team_id FROM {agent_states}"
                )
            ).fetchall()
        return [row[0] for row in rows]

    # -- primitives: writes -------------------------------------------------
    def _append(self, events: Sequence[PersistedEvent], epoch: int | None) -> None:
        """One prepared ``INSERT`` for one event, else one ``COPY``; one transaction."""
        if len(events) > 1:
            repeated = repeated_event(events)
            if repeated is not None:
                raise repeated
        rows = [
            (e.team_id, e.sequence, _event_type(e), e.timestamp, encode_event(e)) for e in events
        ]
        try:
            with self._connection() as conn, conn.transaction():
                for team_id in {event.team_id for event in events}:
                    self._fence(conn, team_id, epoch)
                if len(rows) == 1:
                    conn.execute(self._insert_event, rows[0], prepare=True)
                    return
                with conn.cursor() as cur, cur.copy(self._copy_events) as copy:
                    for row in rows:
                        copy.write_row(row)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name != _EVENTS_PKEY:
                raise
            if len(events) == 1:
                raise DuplicateEventError(events[0].team_id, events[0].sequence) from None
            raise self._duplicate(events) from None

    def _put_team(self, process: Process, epoch: int | None) -> None:
        with self._connection() as conn, conn.transaction():
            self._fence(conn, process.team_id, epoch, exclusive=True)
            self._write_team(conn, process)

    def _write_team(self, conn: Connection[Any], process: Process) -> None:
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
                process.metadata_indexes,
                encode_process(process),
            ),
        )

    def _put_state(self, snapshot: AgentStateSnapshot, epoch: int | None) -> None:
        with self._connection() as conn, conn.transaction():
            self._fence(conn, snapshot.team_id, epoch)
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

    def _erase_team(self, team_id: UUID) -> None:
        """The team's states, events and record in one transaction."""
        with self._connection() as conn, conn.transaction():
            for table in (self.tables.agent_states, self.tables.events, self.tables.teams):
                conn.execute(f"DELETE FROM {table} WHERE team_id = %s", (team_id,))

    # -- primitives: ownership ------------------------------------------------
    def _take_hold(self, team_id: UUID, owner: object) -> Connection[Any] | None:
        """The team's advisory lock, on a session of its own kept while the claim lasts."""
        with self._claims_lock:
            if team_id in self._claims:
                return None
        conn = self._claim_session()
        try:
            locked = self._try_lock(conn, _claim_key(self.target.schema, team_id), team_id)
        except psycopg.Error as exc:
            _end_session(conn)
            raise self._claim_failed(team_id, exc) from exc
        except BaseException:
            _end_session(conn)
            raise
        if not locked:
            _end_session(conn)
            return None
        with self._claims_lock:
            self._claims[team_id] = conn
        return conn

    def _claim_failed(self, team_id: UUID, exc: psycopg.Error) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"claiming team {team_id} at {self.target.display} failed: {str(exc).strip()}"
        )

    def _cas_team(self, team_id: UUID, decide: Decide, hold: object | None) -> Process:
        """``SELECT ... FOR UPDATE`` of the team row and its rewrite, in one transaction.

        A claim runs it on its own session; a takeover on a pooled connection, taking
        no advisory lock (the caller's placement lease stands for liveness; the
        epoch fences every older owner's writes).
        """
        if not isinstance(hold, Connection):
            with self._connection() as conn, conn.transaction():
                return self._rewrite(conn, team_id, decide)
        try:
            with hold.transaction():
                return self._rewrite(hold, team_id, decide)
        except psycopg.Error as exc:
            raise self._claim_failed(team_id, exc) from exc

    def _rewrite(self, conn: Connection[Any], team_id: UUID, decide: Decide) -> Process:
        found = conn.execute(
            self.tables.sql("SELECT payload::text FROM {teams} WHERE team_id = %s FOR UPDATE"),
            (team_id,),
        ).fetchone()
        written = decide(None if found is None else decode_process(found[0], str(team_id)))
        self._write_team(conn, written)
        return written

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

    def _release_hold(self, team_id: UUID) -> None:
        """Unlock the claim's session (kept for a later claim, or closed)."""
        with self._claims_lock:
            conn = self._claims.pop(team_id, None)
        if conn is not None:
            self._spare_session(conn)

    def _hold_alive(self, team_id: UUID) -> bool:
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

    def _check_integrity(self) -> list[str]:
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
        self._closed = True
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
