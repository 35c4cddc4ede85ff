"""SqliteEventStore: the default event store, one SQLite file (standard library only).

Layout: ``teams`` (one row per team record), ``events`` (the append-only logs,
primary key ``(team_id, sequence)``), ``agent_states`` (latest snapshot per
``(team_id, agent_id)``) and ``team_metadata_index`` (one row per metadata index
entry, written in the same transaction as its team). Each row keeps the model's
JSON dump in ``payload``, which is authoritative; the other columns are copies
used to find rows.

Guarantees: the database runs in WAL mode and every write is one transaction,
committed before the method returns; with the default ``synchronous=full`` the
commit is fsynced, so an acknowledged write survives a killed process and a
power cut, and a write interrupted half-way is rolled back when the file is
next opened. ``?synchronous=normal`` trades the power-cut guarantee for speed
(a killed process still loses nothing). One connection is shared by all
threads behind a lock; several processes may open the same file.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID

from akgentic.core.utils.serializer import class_path, serialize_base_model, shared_addresses
from akgentic.team.errors import (
    DuplicateEventError,
    EventStoreError,
    InvalidStoreURLError,
)
from akgentic.team.metadata import derive_metadata_indexes, metadata_filter_entries
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus
from akgentic.team.stores.codec import (
    compact_dumps,
    decode_event,
    decode_process,
    decode_state,
    encode_process,
    encode_state,
)
from akgentic.team.stores.common import ClosingStore, matching_teams
from akgentic.team.urls import parse_file_url

__all__ = ["SqliteEventStore"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_SYNCHRONOUS = ("full", "normal", "extra")
_URL_OPTIONS = frozenset({"synchronous", "timeout"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS teams (
    team_id     TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    payload     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS teams_user_status_idx ON teams (user_id, status);
CREATE TABLE IF NOT EXISTS team_metadata_index (
    entry       TEXT NOT NULL,
    team_id     TEXT NOT NULL,
    PRIMARY KEY (entry, team_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS team_metadata_index_team_idx ON team_metadata_index (team_id);
CREATE TABLE IF NOT EXISTS events (
    team_id     TEXT NOT NULL,
    sequence    INTEGER NOT NULL,
    event_type  TEXT NOT NULL,
    timestamp   TEXT NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (team_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS agent_states (
    team_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    name        TEXT,
    updated_at  TEXT NOT NULL,
    payload     TEXT NOT NULL,
    PRIMARY KEY (team_id, agent_id)
) WITHOUT ROWID;
"""


def _event_row(event: PersistedEvent) -> tuple[str, int, str, str, str]:
    # Once per stored event: the columns are read off the dump the payload is made
    # of, so the team id and timestamp are formatted once, not twice.
    data = serialize_base_model(event)
    return (
        data["team_id"],
        event.sequence,
        class_path(type(event.event)),
        data["timestamp"],
        compact_dumps(data),
    )


class SqliteEventStore(ClosingStore):
    """Event store in one SQLite database file (see the module docstring for guarantees).

    ``path=None`` (or ``":memory:"``) keeps everything in memory, for tests.
    ``synchronous`` is ``"full"`` (default: fsync on every commit),
    ``"normal"`` or ``"extra"``; ``timeout`` is how long a write waits for
    another process's lock, in seconds.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        synchronous: str = "full",
        timeout: float = 30.0,
    ) -> None:
        if synchronous.lower() not in _SYNCHRONOUS:
            raise InvalidStoreURLError(
                f"synchronous must be one of {', '.join(_SYNCHRONOUS)}, not {synchronous!r}"
            )
        memory = path is None or str(path) == ":memory:"
        self.path: Path | None = None if memory else Path(path)  # type: ignore[arg-type]
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            ":memory:" if self.path is None else str(self.path),
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        self._setup(synchronous.lower())

    # -- construction -----------------------------------------------------
    @classmethod
    def from_url(cls, url: str) -> SqliteEventStore:
        """Open ``sqlite:///relative.db``, ``sqlite:////absolute.db`` or ``sqlite:///:memory:``.

        Options: ``?synchronous=full|normal|extra`` and ``?timeout=<seconds>``.
        """
        parsed = parse_file_url(url, "sqlite", _URL_OPTIONS)
        try:
            timeout = float(parsed.options.get("timeout", "30"))
        except ValueError:
            raise InvalidStoreURLError(f"{url!r}: timeout must be a number of seconds") from None
        return cls(
            parsed.path,
            synchronous=parsed.options.get("synchronous", "full"),
            timeout=timeout,
        )

    @classmethod
    def init_url(cls, url: str) -> None:
        """Create the database and its schema if missing (idempotent)."""
        cls.from_url(url).close()

    def _setup(self, synchronous: str) -> None:
        conn = self._connection()
        with self._lock:
            if self.path is not None:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    logger.warning("SQLite store %s could not switch to WAL mode", self.path)
            conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise EventStoreError(
                    f"{self.path}: schema version {version} is newer than this akgentic "
                    f"understands ({SCHEMA_VERSION}); upgrade akgentic"
                )
            with self._transaction() as cur:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        cur.execute(statement)
                cur.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise EventStoreError("this SqliteEventStore is closed")
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        """One write transaction, committed (durably) on success, rolled back on error."""
        with self._lock:
            conn = self._connection()
            cur = conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                if conn.in_transaction:
                    cur.execute("ROLLBACK")
                raise
            else:
                cur.execute("COMMIT")
            finally:
                cur.close()

    # -- events -----------------------------------------------------------
    def save_event(self, event: PersistedEvent) -> None:
        """Append one event (``DuplicateEventError`` if its sequence is taken)."""
        self.save_events((event,))

    def save_events(self, events: Sequence[PersistedEvent]) -> None:
        """Append several events in one transaction: all of them or none."""
        if not events:
            return
        rows = [_event_row(event) for event in events]
        try:
            with self._transaction() as cur:
                cur.executemany(
                    "INSERT INTO events (team_id, sequence, event_type, timestamp, payload) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
        except sqlite3.IntegrityError:
            raise self._duplicate(events) from None

    def _duplicate(self, events: Sequence[PersistedEvent]) -> DuplicateEventError:
        seen: set[tuple[UUID, int]] = set()
        for event in events:
            key = (event.team_id, event.sequence)
            if key in seen:
                return DuplicateEventError(*key)
            seen.add(key)
        with self._lock:
            for team_id, sequence in seen:
                row = (
                    self._connection()
                    .execute(
                        "SELECT 1 FROM events WHERE team_id = ? AND sequence = ?",
                        (str(team_id), sequence),
                    )
                    .fetchone()
                )
                if row is not None:
                    return DuplicateEventError(team_id, sequence)
        first = events[0]
        return DuplicateEventError(first.team_id, first.sequence)

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of the team, by ascending sequence, read in one query."""
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    "SELECT sequence, payload FROM events WHERE team_id = ? ORDER BY sequence",
                    (str(team_id),),
                )
                .fetchall()
            )
        with shared_addresses():
            return [decode_event(payload, team_id, sequence) for sequence, payload in rows]

    def get_max_sequence(self, team_id: UUID) -> int:
        """Highest stored sequence of the team, 0 when it has no event."""
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT COALESCE(MAX(sequence), 0) FROM events WHERE team_id = ?",
                    (str(team_id),),
                )
                .fetchone()
            )
        return int(row[0])

    # -- teams ------------------------------------------------------------
    def save_team(self, process: Process) -> None:
        """Upsert the team record and replace its metadata index entries."""
        entries = derive_metadata_indexes(process.metadata)
        process = process.model_copy(update={"metadata_indexes": entries})
        team_id = str(process.team_id)
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO teams (team_id, user_id, status, created_at, updated_at, payload) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (team_id) DO UPDATE SET "
                "user_id = excluded.user_id, status = excluded.status, "
                "created_at = excluded.created_at, updated_at = excluded.updated_at, "
                "payload = excluded.payload",
                (
                    team_id,
                    process.user_id,
                    str(process.status.value),
                    process.created_at.isoformat(),
                    process.updated_at.isoformat(),
                    encode_process(process),
                ),
            )
            cur.execute("DELETE FROM team_metadata_index WHERE team_id = ?", (team_id,))
            cur.executemany(
                "INSERT OR IGNORE INTO team_metadata_index (entry, team_id) VALUES (?, ?)",
                [(entry, team_id) for entry in entries],
            )

    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, ``None`` if unknown (``TeamRecordUnreadableError`` if corrupt)."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT payload FROM teams WHERE team_id = ?", (str(team_id),))
                .fetchone()
            )
        return None if row is None else decode_process(row[0], str(team_id))

    def delete_team(self, team_id: UUID) -> None:
        """Remove everything of one team in one transaction (no error if unknown)."""
        key = (str(team_id),)
        with self._transaction() as cur:
            cur.execute("DELETE FROM agent_states WHERE team_id = ?", key)
            cur.execute("DELETE FROM events WHERE team_id = ?", key)
            cur.execute("DELETE FROM team_metadata_index WHERE team_id = ?", key)
            cur.execute("DELETE FROM teams WHERE team_id = ?", key)

    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only, AND), oldest first.

        Every value is a bound parameter; metadata terms are ``EXISTS`` checks
        against the index table, AND-ed with the ``user_id`` term.
        """
        clauses: list[str] = []
        params: list[str] = []
        if user_id is not None:
            clauses.append("t.user_id = ?")
            params.append(user_id)
        if status is not None:
            clauses.append("t.status = ?")
            params.append(str(TeamStatus(status).value))
        entries = metadata_filter_entries(metadata)
        for entry in entries:
            clauses.append(
                "EXISTS (SELECT 1 FROM team_metadata_index m "
                "WHERE m.team_id = t.team_id AND m.entry = ?)"
            )
            params.append(entry)
        sql = "SELECT t.team_id, t.payload FROM teams t"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY t.created_at, t.team_id"
        with self._lock:
            rows = self._connection().execute(sql, params).fetchall()
        return matching_teams(rows, user_id, status, entries, logger)

    # -- agent states -----------------------------------------------------
    def save_agent_state(self, snapshot: AgentStateSnapshot) -> None:
        """Upsert the latest state of ``(team_id, agent_id)``."""
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO agent_states (team_id, agent_id, name, updated_at, payload) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (team_id, agent_id) DO UPDATE SET "
                "name = excluded.name, updated_at = excluded.updated_at, "
                "payload = excluded.payload",
                (
                    str(snapshot.team_id),
                    snapshot.agent_id,
                    snapshot.name,
                    snapshot.updated_at.isoformat(),
                    encode_state(snapshot),
                ),
            )

    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """Every agent snapshot of the team, ordered by agent id."""
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    "SELECT agent_id, payload FROM agent_states WHERE team_id = ? "
                    "ORDER BY agent_id",
                    (str(team_id),),
                )
                .fetchall()
            )
        return [decode_state(payload, team_id, agent_id) for agent_id, payload in rows]

    # -- lifecycle --------------------------------------------------------
    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        where = ":memory:" if self.path is None else str(self.path)
        return f"SqliteEventStore({where!r})"
