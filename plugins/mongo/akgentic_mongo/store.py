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

Ownership: a claim is a lease in the team document (``claim``: token, host,
pid, ``lease_until``) renewed by the holding store every third of
:attr:`MongoEventStore.lease_seconds`; claiming compares-and-sets the
document's ``epoch``. A holder on this host is alive while its process is (so
a killed local owner is replaced at once); one on another host while its lease
runs. Fenced writes check ``epoch`` first: inside the write's transaction on a
replica set (the fence updates the team document, so a concurrent claim
conflicts), just before the write on a standalone server (a claim landing in
between can let one last write of the old owner through).
``take_over_team`` (:class:`~akgentic.team.store.TakeoverEventStore`) bumps the
epoch by the same compare-and-set without asking whether the holder is alive,
so a placement layer can move a team away from a frozen owner.

Atomicity: on a replica set or sharded cluster, ``save_events`` and
``delete_team`` each run in one multi-document transaction. On a standalone
server (no transactions) a refused batch removes the events it had inserted
before returning, and a delete removes states, then events, then the record —
a crash in between leaves a team that a second delete finishes.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
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
    TeamClaimLostError,
    TeamOwner,
    TeamStatus,
    claim_error,
    decode_process,
    encode_event,
    encode_process,
    encode_state,
    repeated_event,
)
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


def _team_fields(process: Process) -> Document:
    """The team document's fields (its ``claim`` excluded, which only claims write)."""
    return {
        "user_id": process.user_id,
        "status": str(process.status.value),
        "created_at": _as_utc(process.created_at),
        "updated_at": _as_utc(process.updated_at),
        "metadata_indexes": process.metadata_indexes,
        "epoch": process.epoch,
        "payload": encode_process(process),
    }


def _epoch_filter(doc: Document) -> Document:
    """A filter matching the document only while it still holds the epoch it was read with."""
    return {"epoch": doc["epoch"]} if "epoch" in doc else {"epoch": {"$exists": False}}


def _pid_alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class MongoEventStore(StoreBase):
    """Event store in one MongoDB database (see the module docstring for guarantees).

    Open it with :meth:`from_url`, or build it around an existing client
    (``MongoEventStore(client, "akgentic")``). ``transactions=None`` asks the
    server whether multi-document transactions are available; ``False``
    forces the standalone behaviour (used with mongomock in tests). The claim and
    epoch policy is :class:`~akgentic.team.stores.StoreBase`'s; this class is its
    driver.
    """

    _logger = logger
    _driver_errors = (ServerSelectionTimeoutError, ConnectionFailure)

    def __init__(
        self,
        client: Any,
        database: str,
        *,
        transactions: bool | None = None,
        owns_client: bool = True,
        display: str | None = None,
        team_lock: threading.Lock | None = None,
    ) -> None:
        self.client = client
        self.database = database
        self.display = display or f"database {database!r}"
        self._owns_client = owns_client
        self._lock = threading.Lock()
        self._held: dict[UUID, str] = {}
        self._renewer: threading.Thread | None = None
        self._stop_renewing = threading.Event()
        # A test double that is not thread-safe (mongomock) passes a lock shared by every
        # handle on its in-memory server; a real server needs none.
        self._team_serial: contextlib.AbstractContextManager[Any] = (
            team_lock if team_lock is not None else contextlib.nullcontext()
        )
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

    def _in_transaction(self, work: Callable[[Any], None]) -> None:
        with self.client.start_session() as session:
            session.with_transaction(work)

    def _team_op(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call one method of the teams collection (serialised when a team lock was given)."""
        with self._team_serial:
            return getattr(self._teams, name)(*args, **kwargs)

    #: Seconds a claim held by another host stays valid without being renewed.
    lease_seconds: float = 30.0

    def _driver_error(self, exc: Exception) -> Exception:
        return StoreUnavailableError(f"MongoDB at {self.display} is unavailable: {exc}")

    def _fence(self, team_id: UUID, epoch: int | None, session: Any = None) -> None:
        """Refuse unless the team document holds ``epoch`` (touching it inside a transaction)."""
        if epoch is None:
            return
        key = {"_id": str(team_id), "epoch": epoch}
        if session is not None:
            if self._team_op(
                "update_one", key, {"$inc": {"fence": 1}}, session=session
            ).matched_count:
                return
        elif self._team_op("count_documents", key, limit=1):
            return
        doc = self._team_op("find_one", {"_id": str(team_id)}, {"epoch": 1}, session=session)
        raise TeamClaimLostError(team_id, epoch, None if doc is None else int(doc.get("epoch", 0)))

    # -- primitives: reads --------------------------------------------------
    def _read_team(self, team_id: UUID) -> Payload | None:
        doc = self._team_op("find_one", {"_id": str(team_id)}, {"payload": 1})
        return None if doc is None else doc["payload"]

    def _scan_events(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None,
        before_sequence: int | None,
        limit: int | None,
        newest: bool,
    ) -> Iterator[tuple[int, Payload]]:
        """One range query on the sequence index, streamed in chunks."""
        window: Document = {}
        if after_sequence is not None:
            window["$gt"] = after_sequence
        if before_sequence is not None:
            window["$lt"] = before_sequence
        query: Document = {"team_id": str(team_id)}
        if window:
            query["sequence"] = window
        cursor = self._events.find(query, {"_id": 0, "sequence": 1, "payload": 1}).sort(
            "sequence", DESCENDING if newest else ASCENDING
        )
        if limit is not None:
            cursor = cursor.limit(limit)
        docs = cursor.batch_size(STREAM_CHUNK)
        if newest:
            docs = list(docs)[::-1]
        return ((doc["sequence"], doc["payload"]) for doc in docs)

    def _read_states(self, team_id: UUID) -> list[tuple[str, Payload]]:
        cursor = self._states.find(
            {"team_id": str(team_id)}, {"_id": 0, "agent_id": 1, "payload": 1}
        ).sort("agent_id", ASCENDING)
        return [(doc["agent_id"], doc["payload"]) for doc in cursor]

    def _scan_teams(
        self, user_id: str | None, status: TeamStatus | None, entries: Sequence[str]
    ) -> Iterator[tuple[Any, Payload]]:
        """One ``find`` filter, every value a plain string, never an operator (unsorted:
        BSON dates keep milliseconds only, the base orders by the payloads)."""
        query: Document = {}
        if user_id is not None:
            query["user_id"] = str(user_id)
        if status is not None:
            query["status"] = str(status.value)
        if entries:  # ``$all: []`` would match nothing on a real server
            query["metadata_indexes"] = {"$all": list(entries)}
        return ((doc["_id"], doc["payload"]) for doc in self._teams.find(query, {"payload": 1}))

    def _stored_keys(self) -> set[Any]:
        return {
            *self._teams.distinct("_id"),
            *self._events.distinct("team_id"),
            *self._states.distinct("team_id"),
        }

    # -- primitives: writes -------------------------------------------------
    def _append(self, events: Sequence[PersistedEvent], epoch: int | None) -> None:
        """All or none: a transaction on a replica set, an undone prefix on a standalone."""
        if epoch is None and len(events) == 1:
            try:
                self._events.insert_one(_event_doc(events[0]))
            except DuplicateKeyError:
                raise DuplicateEventError(events[0].team_id, events[0].sequence) from None
            return
        repeated = repeated_event(events)
        if repeated is not None:
            raise repeated
        teams = sorted({event.team_id for event in events}, key=str)
        docs = [_event_doc(event) for event in events]
        if self.transactions:

            def insert(session: Any) -> None:
                for team_id in teams:
                    self._fence(team_id, epoch, session)
                self._events.insert_many(docs, ordered=True, session=session)

            try:
                self._in_transaction(insert)
            except BulkWriteError as exc:
                raise self._refused(events, exc) from None
            except DuplicateKeyError:
                raise self._refused(events, None) from None
            return
        for team_id in teams:
            self._fence(team_id, epoch)
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
        return self._duplicate(events)

    def _put_team(self, process: Process, epoch: int | None) -> None:
        key: Document = {"_id": str(process.team_id)}
        if epoch is None:
            self._team_op("update_one", key, {"$set": _team_fields(process)}, upsert=True)
            return
        fields = _team_fields(process)
        if not self._team_op("update_one", {**key, "epoch": epoch}, {"$set": fields}).matched_count:
            self._fence(process.team_id, epoch)  # raises, naming the epoch found

    def _put_state(self, snapshot: AgentStateSnapshot, epoch: int | None) -> None:
        self._fence(snapshot.team_id, epoch)
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

    def _erase_team(self, team_id: UUID) -> None:
        """States, then events, then the record (in one transaction on a replica set)."""
        key = str(team_id)

        def delete(session: Any) -> None:
            self._states.delete_many({"team_id": key}, session=session)
            self._events.delete_many({"team_id": key}, session=session)
            self._teams.delete_one({"_id": key}, session=session)

        if self.transactions:
            self._in_transaction(delete)
        else:
            delete(None)

    # -- primitives: ownership and checks -------------------------------------
    def _claim_alive(self, claim: Any) -> bool:
        """Whether the holder a team document's ``claim`` names is alive (see the module doc)."""
        if not isinstance(claim, dict) or not claim.get("token"):
            return False
        if claim["token"] in self._held.values():
            return True
        if claim.get("host") == socket.gethostname():
            return _pid_alive(int(claim.get("pid", 0)))
        lease = claim.get("lease_until")
        return isinstance(lease, datetime) and _as_utc(lease) > datetime.now(UTC)

    def _claim_doc(self, owner: TeamOwner, token: str) -> Document:
        lease = datetime.now(UTC) + timedelta(seconds=self.lease_seconds)
        return {"token": token, "host": owner.host, "pid": owner.pid, "lease_until": lease}

    def _take_hold(self, team_id: UUID, owner: TeamOwner) -> Document | None:
        """The ``claim`` a claim will write, unless this store already holds the team.

        Whether another holder is alive is read from the team document by
        :meth:`_cas_team`, in the read its compare-and-set is made against.
        """
        with self._lock:
            if team_id in self._held:
                return None
        return self._claim_doc(owner, uuid4().hex)

    def _cas_team(self, team_id: UUID, decide: Decide, hold: object | None) -> Process | None:
        """One ``insert_one``, or one ``update_one`` filtered on the epoch read.

        The server applies it atomically, so of several claims or takeovers from
        one epoch exactly one wins. A claim (``hold``: its ``claim`` document) is
        refused while the ``claim`` read names a live holder, and writes only if
        that ``claim`` is still there. A takeover leaves the previous holder's
        ``claim`` as it is (it still says who holds a session; the caller's
        lease stands for liveness). On a replica set the previous owner's fenced
        writes touch the team document in their transaction, so each lands
        wholly before the takeover or is refused; on a standalone server one
        write already past its fence check can still land just after it.
        """
        key = str(team_id)
        claim = hold if isinstance(hold, dict) else None
        doc = self._team_op("find_one", {"_id": key})
        if doc is None:
            written = decide(None)
            fields = {"_id": key, **_team_fields(written)}
            if claim is not None:
                fields["claim"] = claim
            try:
                self._team_op("insert_one", fields)
            except DuplicateKeyError:  # created meanwhile: decide again, which refuses
                again = self._team_op("find_one", {"_id": key}, {"payload": 1})
                decide(None if again is None else decode_process(again["payload"], key))
                return None
        else:
            record = decode_process(doc["payload"], key)
            written = decide(record)
            fields = _team_fields(written)
            where = {"_id": key, **_epoch_filter(doc)}
            if claim is not None:
                previous = doc.get("claim")
                if self._claim_alive(previous):
                    raise claim_error(team_id, record)
                held = isinstance(previous, dict)
                where.update({"claim.token": previous["token"]} if held else {"claim": None})
                fields["claim"] = claim
            if not self._team_op("update_one", where, {"$set": fields}).matched_count:
                return None
        if claim is not None:
            with self._lock:
                self._held[team_id] = claim["token"]
                if self._renewer is None:
                    self._renewer = threading.Thread(
                        target=self._renew_leases, name="akgentic-mongo-leases", daemon=True
                    )
                    self._renewer.start()
        return written

    def _renew_leases(self) -> None:
        while not self._stop_renewing.wait(self.lease_seconds / 3):
            with self._lock:
                held = list(self._held.items())
            lease = datetime.now(UTC) + timedelta(seconds=self.lease_seconds)
            for team_id, token in held:
                try:
                    self._team_op(
                        "update_one",
                        {"_id": str(team_id), "claim.token": token},
                        {"$set": {"claim.lease_until": lease}},
                    )
                except PyMongoError as exc:
                    logger.warning("renewing the claim on team %s failed: %s", team_id, exc)

    def _release_hold(self, team_id: UUID) -> None:
        """Clear this store's claim from the team document."""
        with self._lock:
            token = self._held.pop(team_id, None)
        if token is not None and not self._closed:
            self._team_op(
                "update_one", {"_id": str(team_id), "claim.token": token}, {"$unset": {"claim": ""}}
            )

    def _hold_alive(self, team_id: UUID) -> bool:
        """Whether the team document names a live holder."""
        self._check_open()
        doc = self._team_op("find_one", {"_id": str(team_id)}, {"claim": 1})
        return doc is not None and self._claim_alive(doc.get("claim"))

    def _check_integrity(self) -> list[str]:
        """Scan: ids that are not team ids, events whose ``_id`` contradicts their fields."""
        problems: list[str] = []
        for value in self._teams.distinct("_id"):
            try:
                UUID(str(value))
            except ValueError:
                problems.append(f"team document {value!r}: its _id is not a team id")
        for doc in self._events.find({}, {"_id": 1, "team_id": 1, "sequence": 1}):
            if doc["_id"] != f"{doc.get('team_id')}:{doc.get('sequence')}":
                problems.append(f"event document {doc['_id']!r}: _id contradicts its fields")
        return problems

    # -- lifecycle --------------------------------------------------------
    def _close_client(self) -> None:
        if self._owns_client:
            self.client.close()

    def close(self) -> None:
        """Close the client (idempotent); the store is unusable afterwards."""
        for team_id in list(self._held):
            try:
                self.release_team(team_id)
            except EventStoreError as exc:
                logger.warning("releasing team %s on close failed: %s", team_id, exc)
        self._stop_renewing.set()
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._close_client()

    def __repr__(self) -> str:
        return f"MongoEventStore({self.display!r})"
