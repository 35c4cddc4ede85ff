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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import yaml

from akgentic.team.errors import (
    DuplicateEventError,
    EventLogUnreadableError,
    InvalidStoreURLError,
    StoreUnreadableError,
    TeamOwnedError,
    TeamRecordUnreadableError,
)
from akgentic.team.models import AgentStateSnapshot, PersistedEvent, Process, TeamStatus
from akgentic.team.stores.base import Decide, Payload, StoreBase
from akgentic.team.stores.claims import LockFileClaims, LockFileHolds
from akgentic.team.stores.codec import decode_process, dumps, loads, plain
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


class YamlEventStore(LockFileHolds, StoreBase):
    """Event store made of YAML files under ``root`` (see the module docstring).

    ``fsync=False`` skips the fsync calls (faster, not power-cut safe). The claim
    and epoch policy is :class:`~akgentic.team.stores.base.StoreBase`'s; this
    class is its driver.
    """

    _logger = logger

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
        raw = self._read_record(self._team_dir(team_id))
        epoch = int(raw.get("epoch", 0) or 0) if isinstance(raw, dict) else 0
        self._epochs[team_id] = (key, epoch)
        return epoch

    @contextlib.contextmanager
    def _fence(self, team_id: UUID, epoch: int | None, exclusive: bool) -> Iterator[None]:
        """With ``epoch``: hold ``.write.lock`` (exclusive for the record) and check it under it.

        A team without a record is refused before the lock file would create its
        directory. Runs under the team's thread lock.
        """
        if epoch is None:
            yield
            return
        if self._stored_epoch(team_id) is None:
            self._check_epoch(team_id, epoch, None)
        with self._write_lock(team_id, exclusive=exclusive):
            self._check_epoch(team_id, epoch, self._stored_epoch(team_id))
            yield

    def _hold_fault(self, team_id: UUID, exc: OSError) -> Exception:
        return StoreUnreadableError(
            f"cannot claim team {team_id} in the YAML store {self.root}: "
            f"{exc.strerror or exc} (is the directory writable?)"
        )

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

    # -- primitives: reads --------------------------------------------------
    def _read_record(self, team_dir: Path) -> Any:
        try:
            data = (team_dir / TEAM_FILE).read_bytes()
        except FileNotFoundError:
            return None
        try:
            return _load_yaml(data, str(team_dir / TEAM_FILE))
        except EventLogUnreadableError as exc:
            raise TeamRecordUnreadableError(str(exc)) from exc

    def _read_team(self, team_id: UUID) -> Payload | None:
        with self._team_lock(team_id):
            record: Payload | None = self._read_record(self._team_dir(team_id))
        return record

    def _read_log(self, team_id: UUID) -> bytes:
        try:
            return (self._team_dir(team_id) / EVENTS_FILE).read_bytes()
        except FileNotFoundError:
            return b""

    def _scan_events(
        self,
        team_id: UUID,
        *,
        after_sequence: int | None,
        before_sequence: int | None,
        limit: int | None,
        newest: bool,
    ) -> list[tuple[int, Payload]]:
        """Each line's JSON data; an unfinished last record is skipped.

        A window reads each line's sequence off its start and parses only the
        window's lines, so a page of a long log costs no JSON parse of the rest.
        """
        whole = after_sequence is None and before_sequence is None and limit is None
        with self._team_lock(team_id):
            data = self._read_log(team_id)
        complete = data.rfind(b"\n") + 1
        if whole and complete < len(data):
            logger.warning(
                "events log of team %s ends with an incomplete record; ignoring it", team_id
            )
        lines = [line for line in data[:complete].splitlines() if line.strip()]
        chosen: dict[int, Any] = {}
        for number, line in enumerate(lines, start=1):
            try:
                raw: Any = loads(line[len(_RECORD_PREFIX) :]) if whole else line
                sequence = int(raw["sequence"]) if whole else _record_sequence(line)
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines):
                    if whole:
                        logger.warning("events log of team %s: last record unreadable", team_id)
                    continue
                raise EventLogUnreadableError(
                    f"events log of team {team_id}, record {number}, is corrupt: {exc}"
                ) from exc
            if after_sequence is not None and sequence <= after_sequence:
                continue
            if before_sequence is not None and sequence >= before_sequence:
                continue
            chosen.setdefault(sequence, raw)
        sequences = sorted(chosen)
        if limit is not None and len(sequences) > limit:
            sequences = sequences[-limit:] if newest else sequences[:limit]
        if whole:
            return [(sequence, chosen[sequence]) for sequence in sequences]
        try:
            return [(seq, loads(chosen[seq][len(_RECORD_PREFIX) :])) for seq in sequences]
        except ValueError as exc:  # a record whose sequence read but whose JSON did not
            raise EventLogUnreadableError(
                f"events log of team {team_id} has a corrupt record: {exc}"
            ) from exc

    def _read_states(self, team_id: UUID) -> list[tuple[str, Payload]]:
        with self._team_lock(team_id):
            states = self._team_dir(team_id) / STATES_DIR
            files = sorted(states.glob("*.yaml")) if states.is_dir() else []
            raws = [(path, path.read_bytes()) for path in files if not path.name.startswith(".")]
        found: list[tuple[str, Payload]] = []
        for path, data in raws:
            raw = _load_yaml(data, str(path))
            agent_id = str(raw.get("agent_id", path.stem)) if isinstance(raw, dict) else path.stem
            found.append((agent_id, raw))
        found.sort(key=lambda item: item[0])
        return found

    def _scan_teams(
        self, user_id: str | None, status: TeamStatus | None, entries: Sequence[str]
    ) -> Iterator[tuple[Any, Payload]]:
        """Every ``team.yaml``, its filters checked on the raw content before decoding."""
        wanted = set(entries)
        for team_dir in sorted(self.root.iterdir()):
            if team_dir.name.startswith(".") or not team_dir.is_dir():
                continue
            try:
                raw = self._read_record(team_dir)
            except TeamRecordUnreadableError as exc:
                logger.warning("list_teams skips an unreadable team record: %s", exc)
                continue
            if not isinstance(raw, dict):
                continue
            if user_id is not None and raw.get("user_id") != user_id:
                continue
            if status is not None and raw.get("status") != status.value:
                continue
            if wanted <= set(raw.get("metadata_indexes") or []):
                yield team_dir.name, raw

    def _stored_keys(self) -> list[Any]:
        """Every team directory under the root (named by a team id)."""
        found: list[Any] = []
        for entry in self.root.iterdir():
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            with contextlib.suppress(ValueError):
                found.append(UUID(entry.name))
        return found

    def _max_sequence(self, team_id: UUID) -> int:
        with self._team_lock(team_id):
            try:
                fd = os.open(self._team_dir(team_id) / EVENTS_FILE, os.O_RDONLY)
            except FileNotFoundError:
                return 0
            try:
                return self._refresh(team_id, fd, repair=False).maximum
            finally:
                os.close(fd)

    # -- primitives: writes -------------------------------------------------
    def _append(self, events: Sequence[PersistedEvent], epoch: int | None) -> None:
        """A batch spanning several teams is written team by team."""
        by_team: dict[UUID, list[PersistedEvent]] = {}
        for event in events:
            by_team.setdefault(event.team_id, []).append(event)
        for team_id, batch in by_team.items():
            if epoch is None:
                self._append_team(team_id, batch)
                continue
            with self._team_lock(team_id), self._fence(team_id, epoch, exclusive=False):
                self._append_team(team_id, batch)

    def _append_team(self, team_id: UUID, events: list[PersistedEvent]) -> None:
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

    def _put_team(self, process: Process, epoch: int | None) -> None:
        with self._team_lock(process.team_id), self._fence(process.team_id, epoch, True):
            target = self._team_dir(process.team_id) / TEAM_FILE
            self._replace_file(target, _dump_yaml(process.model_dump()))

    def _put_state(self, snapshot: AgentStateSnapshot, epoch: int | None) -> None:
        with self._team_lock(snapshot.team_id), self._fence(snapshot.team_id, epoch, False):
            states = self._team_dir(snapshot.team_id) / STATES_DIR
            target = states / _state_file_name(snapshot.agent_id)
            self._replace_file(target, _dump_yaml(snapshot.model_dump()))

    def _erase_team(self, team_id: UUID) -> None:
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

    # -- primitives: ownership and checks -------------------------------------
    def _cas_team(self, team_id: UUID, decide: Decide, hold: object | None) -> Process:
        """Read and rewrite ``team.yaml`` under the team's exclusive ``.write.lock``.

        The lock every fenced write checks its epoch under, so a write of a
        previous owner lands wholly before a takeover or is refused after it.
        The ``.owners`` lock is no part of it: a frozen previous owner keeps its
        own until it wakes (and is fenced) or dies. An owner frozen in the
        middle of a write holds ``.write.lock``: after :attr:`takeover_wait`
        seconds a takeover gives up with ``TeamOwnedError`` and changes nothing.
        """
        target = self._team_dir(team_id) / TEAM_FILE
        with self._team_lock(team_id):
            if self._stored_epoch(team_id) is None:
                written = decide(None)  # refused before .write.lock creates a directory
                with self._write_lock(team_id, exclusive=True):
                    self._replace_file(target, _dump_yaml(written.model_dump()))
                return written
            wait = None if hold is not None else self.takeover_wait
            try:
                with self._write_lock(team_id, exclusive=True, wait=wait):
                    record = self._read_record(self._team_dir(team_id))
                    written = decide(
                        None if record is None else decode_process(record, str(team_id))
                    )
                    self._replace_file(target, _dump_yaml(written.model_dump()))
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
        return written

    def _check_integrity(self) -> list[str]:
        """Scan the root: stray entries, and every record, log line and state file parsed."""
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
                raw = self._read_record(entry)
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
