"""MongoEventStore: team records, event logs and agent states in MongoDB.

Collections (in the URL's database):

``akgentic_teams``
    One document per team, ``_id`` = the team id. ``payload`` holds the
    record's JSON text and is the only source of truth; ``user_id``,
    ``status``, ``created_at``, ``updated_at`` and ``metadata_indexes`` are
    copies kept to find documents. Indexes: ``akgentic_teams_user_status_idx``,
    ``akgentic_teams_created_idx`` and the multikey
    ``akgentic_teams_metadata_idx`` over ``metadata_indexes``.
``akgentic_events``
    One document per event, ``_id`` = ``"<team_id>:<sequence>"``, so the
    server itself refuses a second write of a sequence; the unique index
    ``akgentic_events_team_sequence_idx`` serves ordered reads.
``akgentic_agent_states``
    Latest snapshot per agent, ``_id`` = ``"<team_id>:<agent_id>"``.
``akgentic_schema_version``
    Written last by the initialiser; the store refuses to open without it.

Payloads are stored as JSON text (the same text the built-in stores write), so
no field name or number of a message is ever reinterpreted by BSON, and
metadata filter values only ever appear as array *elements* of an ``$all``
term: ``$where``, ``$ne`` or dotted keys inside them are plain characters.

Atomicity: on a replica set or sharded cluster, ``save_events`` and
``delete_team`` each run in one multi-document transaction. On a standalone
server (no transactions) a refused batch removes the events it had inserted
before returning, and a delete removes states, then events, then the record —
a crash in between leaves a team that a second delete finishes.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar
from uuid import UUID, uuid4

import pymongo
from pymongo import ASCENDING, DESCENDING
from pymongo.errors import (
    BulkWriteError,
    ConfigurationError,
    ConnectionFailure,
    DuplicateKeyError,
    InvalidURI,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
)

from akgentic.team.errors import (
    DuplicateEventError,
    EventStoreError,
    InvalidStoreURLError,
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
from akgentic_mongo.errors import SchemaNotInitialisedError, StoreUnavailableError
from akgentic_mongo.url import parse_mongo_url, redact

__all__ = ["SCHEMA_VERSION", "MongoEventStore", "ensure_schema", "init_schema"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
#: Documents fetched per round trip when a log is streamed back.
STREAM_CHUNK = 2000
TEAMS = "akgentic_teams"
EVENTS = "akgentic_events"
STATES = "akgentic_agent_states"
VERSION = "akgentic_schema_version"
_COMPONENT = "event_store"
_DUPLICATE_KEY = 11000

Document = dict[str, Any]
P = ParamSpec("P")
R = TypeVar("R")


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    """Turn a lost server into :class:`StoreUnavailableError` (duplicates are handled inside)."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (ServerSelectionTimeoutError, ConnectionFailure) as exc:
            store = args[0]
            raise StoreUnavailableError(
                f"MongoDB at {getattr(store, 'display', '?')} is unavailable: {exc}"
            ) from exc

    return wrapper


def ensure_schema(db: Any) -> None:
    """Create the indexes if missing, then record the schema version (idempotent)."""
    teams, events, states = db[TEAMS], db[EVENTS], db[STATES]
    teams.create_index(
        [("user_id", ASCENDING), ("status", ASCENDING)], name="akgentic_teams_user_status_idx"
    )
    teams.create_index(
        [("created_at", ASCENDING), ("_id", ASCENDING)], name="akgentic_teams_created_idx"
    )
    teams.create_index([("metadata_indexes", ASCENDING)], name="akgentic_teams_metadata_idx")
    events.create_index(
        [("team_id", ASCENDING), ("sequence", ASCENDING)],
        name="akgentic_events_team_sequence_idx",
        unique=True,
    )
    states.create_index(
        [("team_id", ASCENDING), ("agent_id", ASCENDING)], name="akgentic_agent_states_team_idx"
    )
    db[VERSION].update_one({"_id": _COMPONENT}, {"$max": {"version": SCHEMA_VERSION}}, upsert=True)


def _client(url: str) -> tuple[pymongo.MongoClient[Document], str]:
    target = parse_mongo_url(url)
    try:
        client: pymongo.MongoClient[Document] = pymongo.MongoClient(
            target.url, **target.client_options
        )
    except (ConfigurationError, InvalidURI, ValueError) as exc:
        raise InvalidStoreURLError(f"{target.display}: {exc}") from None
    return client, target.database


def init_schema(url: str) -> None:
    """Create the store's indexes in the URL's database if missing (idempotent).

    Used by ``akgentic store init URL`` and ``python -m akgentic_mongo.init``.
    """
    client, database = _client(url)
    try:
        ensure_schema(client[database])
    except (ServerSelectionTimeoutError, ConnectionFailure) as exc:
        raise StoreUnavailableError(f"cannot reach MongoDB at {redact(url)}: {exc}") from exc
    except PyMongoError as exc:
        raise EventStoreError(f"cannot initialise the event store at {redact(url)}: {exc}") from exc
    finally:
        client.close()


def _event_doc(event: PersistedEvent) -> Document:
    kind = type(event.event)
    return {
        "_id": f"{event.team_id}:{event.sequence}",
        "team_id": str(event.team_id),
        "sequence": event.sequence,
        "event_type": f"{kind.__module__}.{kind.__name__}",
        "timestamp": event.timestamp,
        "payload": encode_event(event),
    }


def _as_utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class MongoEventStore(ClosingStore):
    """Event store in one MongoDB database (see the module docstring for guarantees).

    Open it with :meth:`from_url`, or build it around an existing client
    (``MongoEventStore(client, "akgentic")``). ``transactions=None`` asks the
    server whether multi-document transactions are available; ``False``
    forces the standalone behaviour (used with mongomock in tests).
    """

    def __init__(
        self,
        client: Any,
        database: str,
        *,
        transactions: bool | None = None,
        owns_client: bool = True,
        display: str | None = None,
    ) -> None:
        self.client = client
        self.database = database
        self.display = display or f"database {database!r}"
        self._owns_client = owns_client
        self._closed = False
        self._lock = threading.Lock()
        db = client[database]
        self._teams = db[TEAMS]
        self._events = db[EVENTS]
        self._states = db[STATES]
        try:
            found = db[VERSION].find_one({"_id": _COMPONENT})
            if transactions is None:
                transactions = self._server_has_transactions()
        except (ServerSelectionTimeoutError, ConnectionFailure) as exc:
            self._close_client()
            raise StoreUnavailableError(f"cannot reach MongoDB at {self.display}: {exc}") from exc
        self.transactions = transactions
        if found is None:
            self._close_client()
            raise SchemaNotInitialisedError(
                f"the MongoDB database {database!r} at {self.display} holds no akgentic event "
                "store yet; initialise it once with `akgentic store init <URL>` or "
                "`MONGO_URL=<URL> python -m akgentic_mongo.init`"
            )
        if int(found.get("version", 0)) > SCHEMA_VERSION:
            self._close_client()
            raise EventStoreError(
                f"the event store at {self.display} has schema version {found['version']}, "
                f"newer than this akgentic-mongo understands ({SCHEMA_VERSION}); upgrade it"
            )

    @classmethod
    def from_url(cls, url: str) -> MongoEventStore:
        """Open ``mongodb://host:27017/database`` (see :mod:`akgentic_mongo.url`)."""
        client, database = _client(url)
        return cls(client, database, display=redact(url))

    @classmethod
    def init_url(cls, url: str) -> None:
        """Create the indexes the URL's database needs if missing (idempotent)."""
        init_schema(url)

    def _server_has_transactions(self) -> bool:
        """Replica sets and sharded clusters run transactions; a standalone server does not."""
        try:
            hello: Document = self.client.admin.command("hello")
        except OperationFailure:  # servers older than 4.4.2 only know the legacy name
            hello = self.client.admin.command("isMaster")
        return bool(hello.get("setName")) or hello.get("msg") == "isdbgrid"

    def _check_open(self) -> None:
        if self._closed:
            raise EventStoreError("this MongoEventStore is closed")

    def _in_transaction(self, work: Callable[[Any], None]) -> None:
        with self.client.start_session() as session:
            session.with_transaction(work)

    # -- events -----------------------------------------------------------
    @_translated
    def save_event(self, event: PersistedEvent) -> None:
        """Append one event (``DuplicateEventError`` if its sequence is taken)."""
        self._check_open()
        try:
            self._events.insert_one(_event_doc(event))
        except DuplicateKeyError:
            raise DuplicateEventError(event.team_id, event.sequence) from None

    @_translated
    def save_events(self, events: Sequence[PersistedEvent]) -> None:
        """Append several events, all or none (see the module docstring)."""
        self._check_open()
        if not events:
            return
        seen: set[tuple[UUID, int]] = set()
        for event in events:
            key = (event.team_id, event.sequence)
            if key in seen:
                raise DuplicateEventError(*key)
            seen.add(key)
        docs = [_event_doc(event) for event in events]
        if self.transactions:

            def insert(session: Any) -> None:
                self._events.insert_many(docs, ordered=True, session=session)

            try:
                self._in_transaction(insert)
            except BulkWriteError as exc:
                raise self._refused(events, exc) from None
            except DuplicateKeyError:
                raise self._refused(events, None) from None
            return
        batch = uuid4().hex
        for doc in docs:
            doc["_batch"] = batch
        try:
            self._events.insert_many(docs, ordered=True)
        except BulkWriteError as exc:
            inserted = int(exc.details.get("nInserted", 0))
            if inserted:  # undo our own prefix; the token never matches another writer's
                ids = [doc["_id"] for doc in docs[:inserted]]
                self._events.delete_many({"_id": {"$in": ids}, "_batch": batch})
            raise self._refused(events, exc) from None

    def _refused(self, events: Sequence[PersistedEvent], exc: BulkWriteError | None) -> Exception:
        errors = [] if exc is None else exc.details.get("writeErrors", [])
        if exc is not None and not all(e.get("code") == _DUPLICATE_KEY for e in errors):
            return EventStoreError(f"appending events failed: {exc.details}")
        if errors:
            event = events[int(errors[0].get("index", 0))]
            return DuplicateEventError(event.team_id, event.sequence)
        ids = [f"{e.team_id}:{e.sequence}" for e in events]
        taken = {doc["_id"] for doc in self._events.find({"_id": {"$in": ids}}, {"_id": 1})}
        for event, doc_id in zip(events, ids, strict=True):
            if doc_id in taken:
                return DuplicateEventError(event.team_id, event.sequence)
        return DuplicateEventError(events[0].team_id, events[0].sequence)

    @_translated
    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of the team by ascending sequence: one query, streamed in chunks."""
        self._check_open()
        cursor = (
            self._events.find({"team_id": str(team_id)}, {"_id": 0, "sequence": 1, "payload": 1})
            .sort("sequence", ASCENDING)
            .batch_size(STREAM_CHUNK)
        )
        return [decode_event(doc["payload"], team_id, doc["sequence"]) for doc in cursor]

    @_translated
    def get_max_sequence(self, team_id: UUID) -> int:
        """Highest stored sequence of the team, 0 when it has no event."""
        self._check_open()
        cursor = (
            self._events.find({"team_id": str(team_id)}, {"_id": 0, "sequence": 1})
            .sort("sequence", DESCENDING)
            .limit(1)
        )
        for doc in cursor:
            return int(doc["sequence"])
        return 0

    # -- teams ------------------------------------------------------------
    @_translated
    def save_team(self, process: Process) -> None:
        """Upsert the team record; its metadata index is derived again from its metadata."""
        self._check_open()
        entries = derive_metadata_indexes(process.metadata)
        process = process.model_copy(update={"metadata_indexes": entries})
        self._teams.replace_one(
            {"_id": str(process.team_id)},
            {
                "user_id": process.user_id,
                "status": str(process.status.value),
                "created_at": _as_utc(process.created_at),
                "updated_at": _as_utc(process.updated_at),
                "metadata_indexes": entries,
                "payload": encode_process(process),
            },
            upsert=True,
        )

    @_translated
    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, ``None`` if unknown (``TeamRecordUnreadableError`` if corrupt)."""
        self._check_open()
        doc = self._teams.find_one({"_id": str(team_id)}, {"payload": 1})
        return None if doc is None else decode_process(doc["payload"], str(team_id))

    @_translated
    def delete_team(self, team_id: UUID) -> None:
        """Remove the team's states, events and record (no error if unknown)."""
        self._check_open()
        key = str(team_id)

        def delete(session: Any) -> None:
            self._states.delete_many({"team_id": key}, session=session)
            self._events.delete_many({"team_id": key}, session=session)
            self._teams.delete_one({"_id": key}, session=session)

        if self.transactions:
            self._in_transaction(delete)
        else:
            delete(None)

    @_translated
    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only, AND), oldest first.

        ``user_id``, ``status`` and the metadata ``$all`` term form one
        ``find`` filter; every value is a plain string, never an operator.
        """
        self._check_open()
        query: Document = {}
        if user_id is not None:
            query["user_id"] = str(user_id)
        if status is not None:
            query["status"] = str(TeamStatus(status).value)
        entries = metadata_filter_entries(metadata)
        if entries:  # ``$all: []`` would match nothing on a real server
            query["metadata_indexes"] = {"$all": entries}
        cursor = self._teams.find(query, {"payload": 1}).sort(
            [("created_at", ASCENDING), ("_id", ASCENDING)]
        )
        rows = ((doc["_id"], doc["payload"]) for doc in cursor)
        found = matching_teams(rows, user_id, status, entries, logger)
        # BSON dates keep milliseconds only: order exactly by the payload's timestamps.
        found.sort(key=lambda p: (_as_utc(p.created_at), str(p.team_id)))
        return found

    # -- agent states -----------------------------------------------------
    @_translated
    def save_agent_state(self, snapshot: AgentStateSnapshot) -> None:
        """Upsert the latest state of ``(team_id, agent_id)``."""
        self._check_open()
        self._states.replace_one(
            {"_id": f"{snapshot.team_id}:{snapshot.agent_id}"},
            {
                "team_id": str(snapshot.team_id),
                "agent_id": snapshot.agent_id,
                "name": snapshot.name,
                "updated_at": _as_utc(snapshot.updated_at),
                "payload": encode_state(snapshot),
            },
            upsert=True,
        )

    @_translated
    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """Every agent snapshot of the team, ordered by agent id."""
        self._check_open()
        cursor = self._states.find(
            {"team_id": str(team_id)}, {"_id": 0, "agent_id": 1, "payload": 1}
        ).sort("agent_id", ASCENDING)
        return [decode_state(doc["payload"], team_id, doc["agent_id"]) for doc in cursor]

    # -- lifecycle --------------------------------------------------------
    def _close_client(self) -> None:
        if self._owns_client:
            self.client.close()

    def close(self) -> None:
        """Close the client (idempotent); the store is unusable afterwards."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._close_client()

    def __repr__(self) -> str:
        return f"MongoEventStore({self.display!r})"
