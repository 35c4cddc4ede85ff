"""SqliteEventStore: the default event store, one SQLite file (standard library only).

Layout: ``teams`` (one row per team record), ``events`` (the append-only logs,
primary key ``(team_id, sequence)``), ``agent_states`` (latest snapshot per
``(team_id, agent_id)``) and ``team_metadata_index`` (one row per metadata index
entry, written in the same transaction as its team). Each row keeps the model's
JSON dump in ``payload``, which is authoritative; the other columns are copies
used to find rows. A database the store creates gets 16 KiB pages, so that an
event row (about 1 KiB of JSON) fits in its page instead of spilling into an
overflow page of its own; a file created otherwise keeps its page size.

Guarantees: the database runs in WAL mode and every write is one transaction,
committed before the method returns; with the default ``synchronous=full`` the
commit is fsynced, so an acknowledged write survives a killed process and a
power cut, and a write interrupted half-way is rolled back when the file is
next opened. ``?synchronous=normal`` trades the power-cut guarantee for speed
(a killed process still loses nothing). One connection is shared by all
threads behind a lock; several processes may open the same file.

Write path: every sqlite call releases the GIL and must win it back from the
busy actor threads, and ``executemany`` does that once per row. So a batch of
one team (``save_events``, up to ``_CHUNK`` events) is one autocommit
``INSERT ... SELECT ... FROM (VALUES ...)`` whose condition is the epoch
fence: the statement is its own transaction (it takes the write lock when it
starts, like ``BEGIN IMMEDIATE``), all-or-nothing, committed before it
returns. Larger or mixed batches use an explicit transaction with chunked
statements. Row counts are padded to a multiple of ``_ROUND`` so only a few
statements are ever compiled.

Claims: a team's owner holds an exclusive ``flock`` on
``<database>.owners/<team_id>.lock`` (see :mod:`akgentic.team.stores.claims`);
the epoch fence reads the record's ``epoch`` inside the write transaction.
``take_over_team`` (:class:`~akgentic.team.store.TakeoverEventStore`) bumps the
epoch by compare-and-set in such a transaction without asking for the lock, so
a placement layer can move a team away from a frozen owner.

Faults: a file that is not a SQLite database (a text file, a zeroed header),
a damaged one, a path under an existing file or a location this user may not
write each raise :class:`~akgentic.team.errors.StoreUnreadableError` with one
line saying what to do; opening a store whose schema is current writes nothing.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from itertools import chain
from pathlib import Path
from typing import Any
from uuid import UUID

from akgentic.core.utils.serializer import class_path, serialize
from akgentic.team.errors import (
    DuplicateEventError,
    EventStoreError,
    InvalidStoreURLError,
    StoreUnreadableError,
    TeamClaimLostError,
)
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus
from akgentic.team.stores.base import Decide, Payload, StoreBase
from akgentic.team.stores.claims import LockFileClaims, LockFileHolds
from akgentic.team.stores.codec import (
    decode_process,
    encode_event_row,
    encode_process,
    encode_state,
)
from akgentic.team.stores.sqlite_faults import check_file, fault
from akgentic.team.urls import parse_file_url

__all__ = ["SqliteEventStore"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
#: Page size of a database this store creates (an existing file keeps its own).
PAGE_SIZE = 16384
_SYNCHRONOUS = ("full", "normal", "extra")
_EPOCH_SQL = "SELECT COALESCE(json_extract(payload, '$.epoch'), 0) FROM teams WHERE team_id = ?"
_EVENT_COLUMNS = "team_id, sequence, event_type, timestamp, payload"
#: Most rows one INSERT carries (5 parameters each, far below SQLite's 32,766).
_CHUNK = 256
#: Row counts are rounded up to a multiple of this (NULL rows pad, a filter drops
#: them), so at most ``2 * _CHUNK / _ROUND`` statements are ever compiled and they
#: all stay in the connection's statement cache.
_ROUND = 16
_NULL_ROW = (None, None, None, None, None)
_URL_OPTIONS = frozenset({"synchronous", "timeout"})
#: An upper bound above every sequence (SQLite integers are 64-bit).
_NO_BOUND = 2**63 - 1

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


@cache
def _insert_sql(rows: int, fenced: bool) -> str:
    """One INSERT of ``rows`` events; padding rows (NULL team) are filtered out.

    ``fenced`` adds the epoch check as the statement's own condition: in
    autocommit mode the statement is its whole transaction, so the check and the
    rows are atomic exactly as in ``BEGIN IMMEDIATE; SELECT; INSERT; COMMIT``.
    """
    values = ",".join(["(?,?,?,?,?)"] * rows)
    where = "column1 IS NOT NULL"
    if fenced:
        where += f" AND ({_EPOCH_SQL}) = ?"
    return (
        f"INSERT INTO events ({_EVENT_COLUMNS}) SELECT column1, column2, column3, column4, "
        f"column5 FROM (VALUES {values}) WHERE {where}"
    )


def _padded(rows: Sequence[tuple[object, ...]]) -> tuple[int, list[object]]:
    """The rounded-up row count and the flat parameter list of ``rows`` plus padding."""
    size = -(-len(rows) // _ROUND) * _ROUND
    params: list[object] = list(chain.from_iterable(rows))
    params.extend(_NULL_ROW * (size - len(rows)))
    return size, params


def _event_row(event: PersistedEvent) -> tuple[str, int, str, str, str]:
    # Once per stored event: the timestamp column is the text the payload holds,
    # formatted once for both.
    stamp, payload = encode_event_row(event)
    return (
        serialize(event.team_id),
        event.sequence,
        class_path(type(event.event)),
        stamp,
        payload,
    )


class _IncompleteCopyError(Exception):
    """A fork's page missed events: rolls the copy back, then says how many there were."""

    def __init__(self, copied: int) -> None:
        super().__init__(copied)
        self.copied = copied


class SqliteEventStore(LockFileHolds, StoreBase):
    """Event store in one SQLite database file (see the module docstring for guarantees).

    ``path=None`` (or ``":memory:"``) keeps everything in memory, for tests.
    ``synchronous`` is ``"full"`` (default: fsync on every commit),
    ``"normal"`` or ``"extra"``; ``timeout`` is how long a write waits for
    another process's lock, in seconds. The claim and epoch policy is
    :class:`~akgentic.team.stores.base.StoreBase`'s; this class is its driver.
    """

    _logger = logger

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
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        if self.path is not None:
            check_file(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreUnreadableError(
                    f"cannot create the directory of the SQLite store {self.path}: "
                    f"{exc.strerror or exc}"
                ) from None
        self._claims = LockFileClaims(
            None if self.path is None else self.path.with_name(self.path.name + ".owners")
        )
        try:
            self._conn = sqlite3.connect(
                ":memory:" if self.path is None else str(self.path),
                timeout=timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            self._setup(synchronous.lower())
        except sqlite3.Error as exc:
            self.close()
            raise fault(self.path, exc) from None

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
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise EventStoreError(
                    f"{self.path}: schema version {version} is newer than this akgentic "
                    f"understands ({SCHEMA_VERSION}); upgrade akgentic"
                )
            if version == 0 and conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                # Only an empty file takes a page size (WAL fixes it once written).
                # Stored events are about 1 KiB: with 4 KiB pages the larger ones
                # spill into an overflow page each, which doubled the bytes written.
                conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
            if self.path is not None:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    logger.warning("SQLite store %s could not switch to WAL mode", self.path)
            conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            if version == SCHEMA_VERSION:
                return  # nothing to create: opening an existing store writes nothing
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
        with self._lock, self._faults():
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

    @contextmanager
    def _faults(self) -> Iterator[None]:
        """SQLite failures other than a refused duplicate become one-line store errors."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise fault(self.path, exc) from None

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """Run one query under the lock; failures become store errors."""
        with self._lock, self._faults():
            return self._connection().execute(sql, params).fetchall()

    def _fence(self, cur: sqlite3.Cursor, team_id: UUID, epoch: int | None) -> None:
        """Inside a write transaction: refuse unless the record still holds ``epoch``."""
        if epoch is not None:
            row = cur.execute(_EPOCH_SQL, (str(team_id),)).fetchone()
            self._check_epoch(team_id, epoch, None if row is None else int(row[0]))

    def _hold_fault(self, team_id: UUID, exc: OSError) -> Exception:
        return fault(self.path, exc)

    # -- primitives: reads --------------------------------------------------
    def _read_team(self, team_id: UUID) -> Payload | None:
        rows = self._read("SELECT payload FROM teams WHERE team_id = ?", (str(team_id),))
        return str(rows[0][0]) if rows else None

    def _scan_events(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None,
        before_sequence: int | None,
        limit: int | None,
        newest: bool,
    ) -> list[tuple[int, Payload]]:
        """One range read of the primary key, in one query."""
        order = "DESC" if newest else "ASC"
        rows = self._read(
            "SELECT sequence, payload FROM events WHERE team_id = ? AND sequence > ?"
            f" AND sequence < ? ORDER BY sequence {order} LIMIT ?",
            (
                str(team_id),
                -1 if after_sequence is None else after_sequence,
                _NO_BOUND if before_sequence is None else before_sequence,
                -1 if limit is None else limit,
            ),
        )
        if newest:
            rows.reverse()
        return rows

    def _read_states(self, team_id: UUID) -> list[tuple[str, Payload]]:
        return self._read(
            "SELECT agent_id, payload FROM agent_states WHERE team_id = ? ORDER BY agent_id",
            (str(team_id),),
        )

    def _scan_teams(
        self, user_id: str | None, status: TeamStatus | None, entries: Sequence[str]
    ) -> list[tuple[Any, Payload]]:
        """Every value a bound parameter; metadata terms are ``EXISTS`` checks on the index."""
        clauses: list[str] = []
        params: list[str] = []
        if user_id is not None:
            clauses.append("t.user_id = ?")
            params.append(user_id)
        if status is not None:
            clauses.append("t.status = ?")
            params.append(str(status.value))
        for entry in entries:
            clauses.append(
                "EXISTS (SELECT 1 FROM team_metadata_index m "
                "WHERE m.team_id = t.team_id AND m.entry = ?)"
            )
            params.append(entry)
        sql = "SELECT t.team_id, t.payload FROM teams t"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        return self._read(sql, params)

    def _stored_keys(self) -> list[Any]:
        rows = self._read(
            "SELECT team_id FROM teams UNION SELECT DISTINCT team_id FROM events "
            "UNION SELECT DISTINCT team_id FROM agent_states"
        )
        return [row[0] for row in rows]

    # -- primitives: writes -------------------------------------------------
    def _append(self, events: Sequence[PersistedEvent], epoch: int | None) -> None:
        """One statement for a batch of one team (the common case), else one transaction."""
        rows = [_event_row(event) for event in events]
        team = rows[0][0]
        try:
            if len(rows) <= _CHUNK and all(row[0] == team for row in rows):
                self._insert_alone(events[0].team_id, rows, epoch)
                return
            with self._transaction() as cur:
                # One fence check per team and transaction (a batch is one team's).
                for other in {row[0] for row in rows}:
                    self._fence(cur, events[0].team_id if other == team else UUID(other), epoch)
                for start in range(0, len(rows), _CHUNK):
                    size, params = _padded(rows[start : start + _CHUNK])
                    cur.execute(_insert_sql(size, False), params)
        except sqlite3.IntegrityError:
            raise self._duplicate(events) from None

    def _insert_alone(
        self, team_id: UUID, rows: Sequence[tuple[object, ...]], epoch: int | None
    ) -> None:
        """One team's rows (at most ``_CHUNK``) as one autocommit statement.

        Every sqlite call gives up the GIL and must win it back from busy actor
        threads; one statement is one round trip where ``BEGIN``, the fence
        ``SELECT``, a per-row ``executemany`` and ``COMMIT`` were one per row
        plus three. The commit is the same (the connection's ``synchronous``).
        """
        size, params = _padded(rows)
        if epoch is None:
            with self._lock, self._faults():
                self._connection().execute(_insert_sql(size, False), params)
            return
        params.append(str(team_id))
        params.append(epoch)
        with self._lock, self._faults():
            conn = self._connection()
            if conn.execute(_insert_sql(size, True), params).rowcount == len(rows):
                return
            # Nothing was written (the statement is all-or-nothing): the fence refused.
            row = conn.execute(_EPOCH_SQL, (str(team_id),)).fetchone()
        raise TeamClaimLostError(team_id, epoch, None if row is None else int(row[0]))

    def _copy_from(
        self,
        source: UUID,
        target: UUID,
        first: int,
        last: int,
        rewrite: Callable[[Payload], Payload],
    ) -> int:
        """One ``INSERT ... SELECT`` inside the database: the rows never cross into Python
        but for the rewrite, a SQL function for the statement's duration. A window
        missing an event copies nothing (the count is checked in the transaction)."""

        def rewritten(payload: str) -> str:
            return str(rewrite(payload))

        with self._lock:
            conn = self._connection()
            conn.create_function("akgentic_fork_rewrite", 1, rewritten, deterministic=True)
            try:
                with self._transaction() as cur:
                    cur.execute(
                        f"INSERT INTO events ({_EVENT_COLUMNS}) SELECT ?, sequence, event_type, "
                        "timestamp, akgentic_fork_rewrite(payload) FROM events "
                        "WHERE team_id = ? AND sequence >= ? AND sequence <= ? ORDER BY sequence",
                        (str(target), str(source), first, last),
                    )
                    copied = cur.rowcount
                    if copied != last - first + 1:
                        raise _IncompleteCopyError(copied)
            except _IncompleteCopyError as incomplete:
                return incomplete.copied
            except sqlite3.IntegrityError:
                raise DuplicateEventError(target, first) from None
            finally:
                conn.create_function("akgentic_fork_rewrite", 1, None)
        return copied

    def _put_team(self, process: Process, epoch: int | None) -> None:
        with self._transaction() as cur:
            self._fence(cur, process.team_id, epoch)
            self._write_team(cur, process)

    def _write_team(self, cur: sqlite3.Cursor, process: Process) -> None:
        """Upsert the record and replace its metadata index entries (already derived)."""
        team_id = str(process.team_id)
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
            [(entry, team_id) for entry in process.metadata_indexes],
        )

    def _put_state(self, snapshot: AgentStateSnapshot, epoch: int | None) -> None:
        with self._transaction() as cur:
            self._fence(cur, snapshot.team_id, epoch)
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

    def _erase_team(self, team_id: UUID) -> None:
        """Every table in one transaction; then the team's lock file goes too."""
        key = (str(team_id),)
        with self._transaction() as cur:
            for table in ("agent_states", "events", "team_metadata_index", "teams"):
                cur.execute(f"DELETE FROM {table} WHERE team_id = ?", key)
        self._claims.forget(team_id)

    # -- primitives: ownership and checks -------------------------------------
    def _cas_team(self, team_id: UUID, decide: Decide, hold: object | None) -> Process:
        """Read and write the record in one ``BEGIN IMMEDIATE`` transaction.

        The kind every fenced write checks its epoch in, so a write of a previous
        owner lands wholly before a takeover or is refused after it. A takeover
        takes no lock file: a frozen previous owner keeps its ``flock`` until it
        wakes (and is fenced) or dies. A process frozen inside a write
        transaction holds SQLite's write lock, so this waits for it up to the
        store's ``timeout``.
        """
        with self._transaction() as cur:
            row = cur.execute(
                "SELECT payload FROM teams WHERE team_id = ?", (str(team_id),)
            ).fetchone()
            written = decide(None if row is None else decode_process(row[0], str(team_id)))
            self._write_team(cur, written)
        return written

    def _check_integrity(self) -> list[str]:
        """``PRAGMA integrity_check`` plus the table layout this store expects."""
        rows = self._read("PRAGMA integrity_check")
        problems = [str(row[0]) for row in rows if str(row[0]).lower() != "ok"]
        tables = {
            str(r[0]) for r in self._read("SELECT name FROM sqlite_master WHERE type='table'")
        }
        for table in ("teams", "events", "agent_states", "team_metadata_index"):
            if table not in tables:
                problems.append(f"table {table} is missing")
        return problems

    # -- lifecycle --------------------------------------------------------
    def close(self) -> None:
        """Close the connection and drop this store's claims (idempotent)."""
        self._closed = True
        claims = getattr(self, "_claims", None)
        if claims is not None:
            claims.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        where = ":memory:" if self.path is None else str(self.path)
        return f"SqliteEventStore({where!r})"
