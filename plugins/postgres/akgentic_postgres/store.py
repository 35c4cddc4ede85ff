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
* **Streamed resume.** ``load_events`` reads a log in one ordered query
  through a server-side cursor, in chunks.

Connections come from a ``psycopg_pool.ConnectionPool``; one store object is
safe to share between threads, and any number of processes may open stores on
the same database.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from psycopg import Connection, errors
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from akgentic.team.errors import (
    DuplicateEventError,
    EventStoreError,
)
from akgentic.team.metadata import derive_metadata_indexes, metadata_filter_entries
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus
from akgentic.team.stores.codec import (
    decode_event,
    decode_process,
    decode_state,
    encode_event,
    encode_process,
    encode_state,
)
from akgentic.team.stores.common import ClosingStore, matching_teams
from akgentic_postgres.errors import SchemaNotInitialisedError, StoreUnavailableError
from akgentic_postgres.schema import SCHEMA_VERSION, Tables, create_schema, installed_version
from akgentic_postgres.url import PostgresURL, parse_postgres_url

__all__ = ["PostgresEventStore", "init_schema"]

logger = logging.getLogger(__name__)

#: Rows fetched per round trip when a log is streamed back.
STREAM_CHUNK = 2000
_EVENTS_PKEY = "akgentic_events_pkey"


def _connect(target: PostgresURL) -> Connection[Any]:
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
        t = self.tables
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

    # -- events -----------------------------------------------------------
    def save_event(self, event: PersistedEvent) -> None:
        """Append one event (``DuplicateEventError`` if its sequence is taken)."""
        row = (
            event.team_id,
            event.sequence,
            _event_type(event),
            event.timestamp,
            encode_event(event),
        )
        try:
            with self._connection() as conn:
                conn.execute(self._insert_event, row, prepare=True)
        except errors.UniqueViolation as exc:
            if exc.diag.constraint_name != _EVENTS_PKEY:
                raise
            raise DuplicateEventError(event.team_id, event.sequence) from None

    def save_events(self, events: Sequence[PersistedEvent]) -> None:
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
            with (
                self._connection() as conn,
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy(self._copy_events) as copy,
            ):
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
        """Every event of the team by ascending sequence: one query, streamed in chunks."""
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
    def save_team(self, process: Process) -> None:
        """Upsert the team record; its metadata index is derived again from its metadata."""
        entries = derive_metadata_indexes(process.metadata)
        process = process.model_copy(update={"metadata_indexes": entries})
        with self._connection() as conn:
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
    def save_agent_state(self, snapshot: AgentStateSnapshot) -> None:
        """Upsert the latest state of ``(team_id, agent_id)``."""
        with self._connection() as conn:
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

    # -- lifecycle --------------------------------------------------------
    def close(self) -> None:
        """Close the connection pool (idempotent)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __repr__(self) -> str:
        return f"PostgresEventStore({self.target.display!r})"
