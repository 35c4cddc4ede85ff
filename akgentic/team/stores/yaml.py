"""YamlEventStore: plain files, one directory per team, no database.

Layout under the root directory::

    <team_id>/team.yaml              the team record (replaced atomically)
    <team_id>/events.yaml            the event log (append-only)
    <team_id>/states/<agent>.yaml    latest state of each agent (replaced atomically)

``events.yaml`` is a YAML sequence written one record per line
(``- {"team_id": ..., "sequence": 1, ...}``): each item is a JSON object, which
is valid YAML flow syntax, so the file opens in any YAML tool while appends
stay a single ``write`` of one line. Guarantees: an append is written (and, by
default, fsynced) before the method returns, under an exclusive file lock so
several threads or processes can append; a record cut short by a crash is
ignored on read and trimmed before the next append; ``team.yaml`` and state
files are replaced by rename, so a reader sees either the old or the new
version, never a mix. ``?fsync=false`` skips the fsyncs: a killed process
still loses nothing acknowledged, a power cut may.

Claims: a team's owner holds an exclusive ``flock`` on
``.owners/<team_id>.lock`` under the root (see :mod:`akgentic.team.stores.claims`).
The epoch fence is the ``epoch`` of ``team.yaml``, read under
``<team_id>/.write.lock``: a claim or a takeover holds it exclusively while it
rewrites the record, a fenced append holds it shared while it checks and
writes. ``take_over_team`` (:class:`~akgentic.team.store.TakeoverEventStore`)
bumps the epoch by compare-and-set without asking for the owner's lock, so a
placement layer can move a team away from a frozen owner.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import yaml

from akgentic.core.utils.serializer import shared_addresses
from akgentic.team.errors import (
    DuplicateEventError,
    EventLogUnreadableError,
    EventStoreError,
    InvalidStoreURLError,
    StoreUnreadableError,
    TeamClaimLostError,
    TeamNotFoundError,
    TeamOwnedError,
    TeamRecordUnreadableError,
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
from akgentic.team.stores.claims import LockFileClaims, claim_error
from akgentic.team.stores.codec import (
    decode_event,
    decode_process,
    decode_state,
    dumps,
    loads,
    plain,
)
from akgentic.team.stores.common import ClosingStore
from akgentic.team.urls import parse_file_url

try:  # POSIX advisory locks; without them only one process may write a team at a time.
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX platforms
    fcntl = None  # type: ignore[assignment]

__all__ = ["YamlEventStore"]

logger = logging.getLogger(__name__)

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

TEAM_FILE = "team.yaml"
EVENTS_FILE = "events.yaml"
STATES_DIR = "states"
OWNERS_DIR = ".owners"
WRITE_LOCK = ".write.lock"
_RECORD_PREFIX = b"- "
_SEQUENCE = re.compile(rb'^- \{"team_id":"[^"]*","sequence":(\d+),')
_SAFE_NAME = re.compile(r"^[A-Za-z0-9@_+-][A-Za-z0-9@_.+-]*$")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_URL_OPTIONS = frozenset({"fsync"})


def _state_file_name(agent_id: str) -> str:
    if _SAFE_NAME.match(agent_id) and len(agent_id) < 200:
        return f"{agent_id}.yaml"
    return f"~{agent_id.encode('utf-8').hex()[:200]}.yaml"


def _dump_yaml(data: Any) -> bytes:
    text: str = yaml.dump(plain(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    return text.encode("utf-8")


def _load_yaml(data: bytes, what: str) -> Any:
    try:
        return yaml.load(data, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise EventLogUnreadableError(f"{what} is not valid YAML: {exc}") from exc


def _record_sequence(line: bytes) -> int:
    match = _SEQUENCE.match(line)
    if match is not None:
        return int(match.group(1))
    return int(json.loads(line[len(_RECORD_PREFIX) :])["sequence"])


@dataclass
class _LogIndex:
    """What this process knows of one team's events file: complete bytes and sequences."""

    inode: int = 0
    size: int = 0
    sequences: set[int] = field(default_factory=set)
    maximum: int = 0


class YamlEventStore(ClosingStore):
    """Event store made of YAML files under ``root`` (see the module docstring).

    ``fsync=False`` skips the fsync calls (faster, not power-cut safe).
    """

    def __init__(self, root: str | Path, *, fsync: bool = True) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise StoreUnreadableError(
                f"{self.root} is a file, but the YAML store needs a directory there; "
                "name a directory (new or holding a YAML store)"
            )
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnreadableError(
                f"cannot create the YAML store directory {self.root}: {exc.strerror or exc} "
                "(is part of the path a file, or not writable?)"
            ) from None
        self._claims = LockFileClaims(self.root / OWNERS_DIR)
        #: Seconds ``take_over_team`` waits for a write in progress to finish.
        self.takeover_wait = 30.0
        self._epochs: dict[UUID, tuple[tuple[int, int, int], int]] = {}
        self.fsync = fsync
        self._closed = False
        self._guard = threading.Lock()
        self._team_locks: dict[UUID, threading.RLock] = {}
        self._logs: dict[UUID, _LogIndex] = {}
        if os.access(self.root, os.W_OK):
            for leftover in self.root.glob(".deleted-*"):
                shutil.rmtree(leftover, ignore_errors=True)

    @classmethod
    def from_url(cls, url: str) -> YamlEventStore:
        """Open ``yaml:///relative/dir`` or ``yaml:////absolute/dir`` (``?fsync=false``)."""
        parsed = parse_file_url(url, "yaml", _URL_OPTIONS)
        if parsed.path is None:
            raise InvalidStoreURLError(f"{url!r}: the YAML store needs a directory, not :memory:")
        flag = parsed.options.get("fsync", "true").lower()
        if flag not in _TRUE | _FALSE:
            raise InvalidStoreURLError(f"{url!r}: fsync must be true or false, not {flag!r}")
        return cls(parsed.path, fsync=flag in _TRUE)

    @classmethod
    def init_url(cls, url: str) -> None:
        """Create the root directory if missing (idempotent)."""
        cls.from_url(url).close()

    # -- helpers ----------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise EventStoreError("this YamlEventStore is closed")

    def _team_dir(self, team_id: UUID) -> Path:
        return self.root / str(UUID(str(team_id)))

    @contextlib.contextmanager
    def _team_lock(self, team_id: UUID) -> Iterator[None]:
        self._check_open()
        with self._guard:
            lock = self._team_locks.setdefault(team_id, threading.RLock())
        with lock:
            yield

    @contextlib.contextmanager
    def _write_lock(
        self, team_id: UUID, exclusive: bool, wait: float | None = None
    ) -> Iterator[None]:
        """The team's ``.write.lock`` flock: exclusive for claims, shared for fenced writes.

        With ``wait``, give up after that many seconds (``TimeoutError``).
        """
        team_dir = self._team_dir(team_id)
        team_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(team_dir / WRITE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
                if wait is None:
                    fcntl.flock(fd, mode)
                else:
                    _flock_within(fd, mode, wait)
            yield
        finally:
            os.close(fd)

    def _stored_epoch(self, team_id: UUID) -> int | None:
        """The ``epoch`` of ``team.yaml`` (``None`` without a record), re-read when it changed."""
        path = self._team_dir(team_id) / TEAM_FILE
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        cached = self._epochs.get(team_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        raw = self._read_team(self._team_dir(team_id))
        epoch = int(raw.get("epoch", 0) or 0) if isinstance(raw, dict) else 0
        self._epochs[team_id] = (key, epoch)
        return epoch

    def _check_epoch(self, team_id: UUID, epoch: int | None) -> None:
        if epoch is None:
            return
        current = self._stored_epoch(team_id)
        if current != epoch:
            raise TeamClaimLostError(team_id, epoch, current)

    def _sync_dir(self, path: Path) -> None:
        if not self.fsync:
            return
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _replace_file(self, target: Path, data: bytes) -> None:
        """Write ``target`` atomically: temporary file, fsync, rename, fsync directory."""
        created = not target.parent.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        self._sync_dir(target.parent)
        if created:
            self._sync_dir(target.parent.parent)

    def _refresh(self, team_id: UUID, fd: int, repair: bool) -> _LogIndex:
        """Bring the cached index of a team's log up to date with the file behind ``fd``.

        With ``repair`` (only while holding the exclusive file lock), a record
        cut short by a crash is cut off the file so the next append starts on
        a fresh line.
        """
        stat = os.fstat(fd)
        size = stat.st_size
        index = self._logs.get(team_id)
        if index is None or index.size > size or index.inode != stat.st_ino:
            index = _LogIndex(inode=stat.st_ino)
        if index.size < size:
            chunk = os.pread(fd, size - index.size, index.size)
            complete = chunk.rfind(b"\n") + 1
            for line in chunk[:complete].splitlines():
                if not line.strip():
                    continue
                try:
                    sequence = _record_sequence(line)
                except (ValueError, KeyError, TypeError):
                    logger.warning("events log of team %s has an unreadable record", team_id)
                    continue
                index.sequences.add(sequence)
                index.maximum = max(index.maximum, sequence)
            index.size += complete
            if complete < len(chunk) and repair:
                logger.warning(
                    "events log of team %s ends with an incomplete record (%d bytes), "
                    "left by an interrupted write; trimming it",
                    team_id,
                    len(chunk) - complete,
                )
                os.ftruncate(fd, index.size)
        self._logs[team_id] = index
        return index

    # -- events -----------------------------------------------------------
    def save_event(self, event: PersistedEvent, *, epoch: int | None = None) -> None:
        """Append one event (``DuplicateEventError`` if its sequence is taken)."""
        self.save_events((event,), epoch=epoch)

    def save_events(self, events: Sequence[PersistedEvent], *, epoch: int | None = None) -> None:
        """Append events; a batch spanning several teams is written team by team."""
        by_team: dict[UUID, list[PersistedEvent]] = {}
        for event in events:
            by_team.setdefault(event.team_id, []).append(event)
        for team_id, batch in by_team.items():
            if epoch is None:
                self._append(team_id, batch)
                continue
            with self._team_lock(team_id):
                if self._stored_epoch(team_id) is None:
                    raise TeamClaimLostError(team_id, epoch, None)
                with self._write_lock(team_id, exclusive=False):
                    self._check_epoch(team_id, epoch)
                    self._append(team_id, batch)

    def _append(self, team_id: UUID, events: list[PersistedEvent]) -> None:
        lines = [b"- " + dumps(event.model_dump()).encode("utf-8") + b"\n" for event in events]
        with self._team_lock(team_id):
            team_dir = self._team_dir(team_id)
            path = team_dir / EVENTS_FILE
            created = False
            try:
                # A team this store appended to before has its directory: no
                # exists/mkdir round trip per batch, only the open.
                if team_id not in self._logs:
                    raise FileNotFoundError(path)
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            except FileNotFoundError:
                created = not team_dir.exists()
                team_dir.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                index = self._refresh(team_id, fd, repair=True)
                batch: set[int] = set()
                for event in events:
                    if event.sequence in index.sequences or event.sequence in batch:
                        raise DuplicateEventError(team_id, event.sequence)
                    batch.add(event.sequence)
                data = b"".join(lines)
                _write_all(fd, data)
                if self.fsync:
                    os.fsync(fd)
                index.size += len(data)
                index.sequences |= batch
                index.maximum = max(index.maximum, *batch)
            finally:
                os.close(fd)  # also releases the flock
            if created:
                self._sync_dir(self.root)
                self._sync_dir(team_dir)

    def _read_log(self, team_id: UUID) -> bytes:
        try:
            return (self._team_dir(team_id) / EVENTS_FILE).read_bytes()
        except FileNotFoundError:
            return b""

    def load_events(self, team_id: UUID) -> list[PersistedEvent]:
        """Every event of the team by ascending sequence; an unfinished last record is skipped."""
        records = self._raw_events(team_id)
        with shared_addresses():
            return [decode_event(records[seq], team_id, seq) for seq in sorted(records)]

    def _raw_events(self, team_id: UUID) -> dict[int, dict[str, Any]]:
        """The JSON data of every event line by sequence (nothing decoded into classes)."""
        with self._team_lock(team_id):
            data = self._read_log(team_id)
        complete = data.rfind(b"\n") + 1
        if complete < len(data):
            logger.warning(
                "events log of team %s ends with an incomplete record; ignoring it", team_id
            )
        lines = [line for line in data[:complete].splitlines() if line.strip()]
        records: dict[int, dict[str, Any]] = {}
        for number, line in enumerate(lines, start=1):
            try:
                raw = loads(line[len(_RECORD_PREFIX) :])
                sequence = int(raw["sequence"])
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines):
                    logger.warning("events log of team %s: last record unreadable", team_id)
                    continue
                raise EventLogUnreadableError(
                    f"events log of team {team_id}, record {number}, is corrupt: {exc}"
                ) from exc
            records.setdefault(sequence, raw)
        return records

    def load_events_page(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None = None,
        before_sequence: int | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> list[PersistedEvent]:
        """A window of the log: sequences are read off each line, only the page is decoded."""
        check_page(after_sequence, before_sequence, limit)
        with self._team_lock(team_id):
            data = self._read_log(team_id)
        complete = data.rfind(b"\n") + 1
        lines = [line for line in data[:complete].splitlines() if line.strip()]
        chosen: dict[int, bytes] = {}
        for number, line in enumerate(lines, start=1):
            try:
                sequence = _record_sequence(line)
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines):
                    continue  # an unfinished last record, as load_events skips it
                raise EventLogUnreadableError(
                    f"events log of team {team_id}, record {number}, is corrupt: {exc}"
                ) from exc
            if after_sequence is not None and sequence <= after_sequence:
                continue
            if before_sequence is not None and sequence >= before_sequence:
                continue
            chosen.setdefault(sequence, line)
        sequences = sorted(chosen)
        if limit is not None and len(sequences) > limit:
            sequences = sequences[-limit:] if newest else sequences[:limit]
        with shared_addresses():
            try:
                return [
                    decode_event(loads(chosen[seq][len(_RECORD_PREFIX) :]), team_id, seq)
                    for seq in sequences
                ]
            except ValueError as exc:  # a record whose sequence read but whose JSON did not
                raise EventLogUnreadableError(
                    f"events log of team {team_id} has a corrupt record: {exc}"
                ) from exc

    def get_max_sequence(self, team_id: UUID) -> int:
        """Highest stored sequence of the team, 0 when it has no event."""
        with self._team_lock(team_id):
            try:
                fd = os.open(self._team_dir(team_id) / EVENTS_FILE, os.O_RDONLY)
            except FileNotFoundError:
                return 0
            try:
                return self._refresh(team_id, fd, repair=False).maximum
            finally:
                os.close(fd)

    # -- teams ------------------------------------------------------------
    def save_team(self, process: Process, *, epoch: int | None = None) -> None:
        """Write ``team.yaml`` atomically (metadata index derived again; fenced by ``epoch``)."""
        entries = derive_metadata_indexes(process.metadata)
        update: dict[str, Any] = {"metadata_indexes": entries}
        if epoch is not None:
            update["epoch"] = epoch
        process = process.model_copy(update=update)
        with self._team_lock(process.team_id):
            target = self._team_dir(process.team_id) / TEAM_FILE
            if epoch is None:
                self._replace_file(target, _dump_yaml(process.model_dump()))
                return
            if self._stored_epoch(process.team_id) is None:
                raise TeamClaimLostError(process.team_id, epoch, None)
            with self._write_lock(process.team_id, exclusive=True):
                self._check_epoch(process.team_id, epoch)
                self._replace_file(target, _dump_yaml(process.model_dump()))

    def _read_team(self, team_dir: Path) -> Any:
        try:
            data = (team_dir / TEAM_FILE).read_bytes()
        except FileNotFoundError:
            return None
        try:
            return _load_yaml(data, str(team_dir / TEAM_FILE))
        except EventLogUnreadableError as exc:
            raise TeamRecordUnreadableError(str(exc)) from exc

    def load_team(self, team_id: UUID) -> Process | None:
        """The team record, ``None`` if unknown (``TeamRecordUnreadableError`` if corrupt)."""
        with self._team_lock(team_id):
            raw = self._read_team(self._team_dir(team_id))
        if raw is None:
            return None
        return decode_process(raw, str(team_id))

    def load_raw_team(self, team_id: UUID) -> RawTeam:
        """What the store holds of a team as JSON data, no class imported (for checks)."""
        with self._team_lock(team_id):
            record = self._read_team(self._team_dir(team_id))
            states = self._team_dir(team_id) / STATES_DIR
            files = sorted(states.glob("*.yaml")) if states.is_dir() else []
            raws = [(path, path.read_bytes()) for path in files if not path.name.startswith(".")]
        events = self._raw_events(team_id)
        return RawTeam(
            record=record,
            events=[(sequence, events[sequence]) for sequence in sorted(events)],
            states=[(path.stem, _load_yaml(data, str(path))) for path, data in raws],
        )

    def delete_team(self, team_id: UUID) -> None:
        """Remove the team's directory: renamed away first (atomic), then erased."""
        with self._team_lock(team_id):
            team_dir = self._team_dir(team_id)
            self._logs.pop(team_id, None)
            self._epochs.pop(team_id, None)
            if not team_dir.exists():
                return
            graveyard = self.root / f".deleted-{team_dir.name}-{uuid.uuid4().hex}"
            os.replace(team_dir, graveyard)
            self._sync_dir(self.root)
            shutil.rmtree(graveyard, ignore_errors=True)
        self._claims.forget(team_id)

    def list_teams(
        self,
        user_id: str | None = None,
        status: TeamStatus | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[Process]:
        """Team records matching every filter (equality only, AND), oldest first.

        Filters run on the raw file content before a record is validated.
        """
        self._check_open()
        wanted_status = None if status is None else str(TeamStatus(status).value)
        entries = set(metadata_filter_entries(metadata))
        found: list[Process] = []
        for team_dir in sorted(self.root.iterdir()):
            if team_dir.name.startswith(".") or not team_dir.is_dir():
                continue
            try:
                raw = self._read_team(team_dir)
                if not isinstance(raw, dict):
                    continue
                if user_id is not None and raw.get("user_id") != user_id:
                    continue
                if wanted_status is not None and raw.get("status") != wanted_status:
                    continue
                stored = raw.get("metadata_indexes") or []
                if not entries <= set(stored):
                    continue
                process = decode_process(raw, team_dir.name)
            except TeamRecordUnreadableError as exc:
                logger.warning("list_teams skips an unreadable team record: %s", exc)
                continue
            found.append(process)
        found.sort(key=lambda p: (p.created_at, str(p.team_id)))
        return found

    # -- agent states -----------------------------------------------------
    def save_agent_state(self, snapshot: AgentStateSnapshot, *, epoch: int | None = None) -> None:
        """Replace ``states/<agent_id>.yaml`` atomically (fenced by ``epoch``)."""
        with self._team_lock(snapshot.team_id):
            states = self._team_dir(snapshot.team_id) / STATES_DIR
            target = states / _state_file_name(snapshot.agent_id)
            if epoch is None:
                self._replace_file(target, _dump_yaml(snapshot.model_dump()))
                return
            if self._stored_epoch(snapshot.team_id) is None:
                raise TeamClaimLostError(snapshot.team_id, epoch, None)
            with self._write_lock(snapshot.team_id, exclusive=False):
                self._check_epoch(snapshot.team_id, epoch)
                self._replace_file(target, _dump_yaml(snapshot.model_dump()))

    def load_agent_states(self, team_id: UUID) -> list[AgentStateSnapshot]:
        """Every agent snapshot of the team, ordered by agent id."""
        with self._team_lock(team_id):
            states = self._team_dir(team_id) / STATES_DIR
            files = sorted(states.glob("*.yaml")) if states.is_dir() else []
            raws = [(path, path.read_bytes()) for path in files if not path.name.startswith(".")]
        snapshots = []
        for path, data in raws:
            raw = _load_yaml(data, str(path))
            agent_id = str(raw.get("agent_id", path.stem)) if isinstance(raw, dict) else path.stem
            snapshots.append(decode_state(raw, team_id, agent_id))
        snapshots.sort(key=lambda s: s.agent_id)
        return snapshots

    # -- claims and checks ------------------------------------------------
    def claim_team(
        self, team_id: UUID, owner: TeamOwner, *, create: Process | None = None
    ) -> Process:
        """Claim ``team_id`` for ``owner`` (see ``EventStore.claim_team``)."""
        self._check_open()
        try:
            acquired = self._claims.acquire(team_id)
        except OSError as exc:
            raise StoreUnreadableError(
                f"cannot claim team {team_id} in the YAML store {self.root}: "
                f"{exc.strerror or exc} (is the directory writable?)"
            ) from None
        if not acquired:
            raise claim_error(team_id, self.load_team(team_id))
        try:
            with self._team_lock(team_id):
                current = self.load_team(team_id)
                if create is not None:
                    if current is not None:
                        raise TeamStateError(team_id, "exists", f"team {team_id} already exists")
                    claimed = create.model_copy(
                        update={"team_id": team_id, "owner": owner, "epoch": 1}
                    )
                else:
                    if current is None:
                        raise TeamNotFoundError(team_id)
                    claimed = current.model_copy(
                        update={
                            "owner": owner,
                            "epoch": current.epoch + 1,
                            "updated_at": utc_now(),
                        }
                    )
                claimed = claimed.model_copy(
                    update={"metadata_indexes": derive_metadata_indexes(claimed.metadata)}
                )
                with self._write_lock(team_id, exclusive=True):
                    target = self._team_dir(team_id) / TEAM_FILE
                    self._replace_file(target, _dump_yaml(claimed.model_dump()))
        except BaseException:
            self._claims.release(team_id)
            raise
        return claimed

    def take_over_team(self, team_id: UUID, owner: TeamOwner, *, epoch: int) -> Process:
        """Bump the epoch from ``epoch`` for ``owner``, claim held or not (``TakeoverEventStore``).

        The compare-and-set runs under the team's exclusive ``.write.lock``, the
        lock every fenced write checks its epoch under, so a write of the
        previous owner lands wholly before the takeover or is refused after it.
        The ``.owners`` lock is neither asked for nor dropped: a frozen previous
        owner keeps it until it wakes (and is fenced) or dies; the caller's
        lease stands for liveness. An owner frozen in the middle of a write
        holds ``.write.lock``: after :attr:`takeover_wait` seconds the takeover
        gives up with ``TeamOwnedError`` and changes nothing.
        """
        with self._team_lock(team_id):
            if self._stored_epoch(team_id) is None:
                raise TeamNotFoundError(team_id)
            try:
                with self._write_lock(team_id, exclusive=True, wait=self.takeover_wait):
                    current = self.load_team(team_id)
                    if current is None:
                        raise TeamNotFoundError(team_id)
                    if current.epoch != epoch:
                        raise TeamClaimLostError(team_id, epoch, current.epoch)
                    claimed = current.model_copy(
                        update={
                            "owner": owner,
                            "epoch": current.epoch + 1,
                            "updated_at": utc_now(),
                            "metadata_indexes": derive_metadata_indexes(current.metadata),
                        }
                    )
                    target = self._team_dir(team_id) / TEAM_FILE
                    self._replace_file(target, _dump_yaml(claimed.model_dump()))
            except TimeoutError:
                where = self.load_team(team_id)
                holder = where.owner.describe() if where and where.owner else None
                raise TeamOwnedError(
                    team_id,
                    holder,
                    f"team {team_id}: its owner ({holder or 'another process'}) has been in "
                    f"the middle of a write for {self.takeover_wait:g} s (frozen?); the "
                    "takeover changed nothing, try again",
                ) from None
        return claimed

    def release_team(self, team_id: UUID) -> None:
        """Drop this store's lock on ``team_id``."""
        self._claims.release(team_id)

    def claim_held(self, team_id: UUID) -> bool:
        """Whether a live process holds the lock of ``team_id``."""
        return self._claims.is_held(team_id)

    def stored_team_ids(self) -> set[UUID]:
        """Every team directory under the root (named by a team id)."""
        self._check_open()
        found: set[UUID] = set()
        for entry in self.root.iterdir():
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            try:
                found.add(UUID(entry.name))
            except ValueError:
                continue
        return found

    def check_integrity(self) -> list[str]:
        """Scan the root: stray entries, and every record, log line and state file parsed."""
        self._check_open()
        problems: list[str] = []
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith("."):
                continue
            try:
                UUID(entry.name)
            except ValueError:
                problems.append(f"{entry}: not a team directory (its name is not a team id)")
                continue
            if not entry.is_dir():
                problems.append(f"{entry}: a file where a team directory belongs")
                continue
            try:
                raw = self._read_team(entry)
            except TeamRecordUnreadableError as exc:
                problems.append(str(exc))
            else:
                if raw is not None and not isinstance(raw, dict):
                    problems.append(f"{entry / TEAM_FILE}: not a mapping")
            events = entry / EVENTS_FILE
            data = events.read_bytes() if events.is_file() else b""
            for number, line in enumerate(data.splitlines(keepends=True), start=1):
                if not line.strip():
                    continue
                if not line.endswith(b"\n"):
                    problems.append(
                        f"{events}: record {number} is incomplete (an interrupted write)"
                    )
                    continue
                try:
                    loads(line[len(_RECORD_PREFIX) :])
                except ValueError as exc:
                    problems.append(f"{events}: record {number} is not valid: {exc}")
        return problems

    # -- lifecycle --------------------------------------------------------
    def close(self) -> None:
        """Mark the store closed and drop its claims (it holds no other open file)."""
        self._closed = True
        self._claims.close()
        self._logs.clear()

    def __repr__(self) -> str:
        return f"YamlEventStore({str(self.root)!r})"


def _flock_within(fd: int, mode: int, wait: float) -> None:
    """``flock`` that gives up after ``wait`` seconds (``TimeoutError``)."""
    assert fcntl is not None
    deadline = time.monotonic() + wait
    pause = threading.Event()
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"lock not free within {wait:g} s") from None
            pause.wait(0.01)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
