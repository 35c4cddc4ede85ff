"""The indexing pipeline of one tree: claims, bounded index and embed workers, finalising.

One :class:`RagPipeline` per ``#Workspace`` actor (or per card without a team). Its
state changes run through ``post`` only — the actor's mailbox in a team, a lock
otherwise — while extraction, splitting and embedding run in at most 4 + 4 workers
(child actors of ``#Workspace`` in a team, threads otherwise; see
:mod:`~akgentic_workspace.rag.workers`) that report back through ``post``. Claims
name the pipeline id, whose lock file this pipeline holds shared for as long as it
lives: when another pipeline can lock it exclusively, the claimer is gone and its
files are requeued at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from akgentic.plugin_api import RetriableError
from akgentic_workspace.files import TooLarge, TreeFiles
from akgentic_workspace.rag.context import RagContext
from akgentic_workspace.rag.errors import SourceError
from akgentic_workspace.rag.policy import chunk_id, superseded
from akgentic_workspace.rag.records import Record, path_hash
from akgentic_workspace.rag.split import (
    MAX_CHUNKS_PER_FILE,
    SplitConfig,
    compose,
    split_lines,
    split_markdown,
)
from akgentic_workspace.rag.walk import DOCUMENT_TYPES
from akgentic_workspace.rag.workers import ActorRunner, Runner, ThreadRunner

__all__ = ["IN_FLIGHT", "RagPipeline", "SourceError", "read_source"]

log = logging.getLogger("akgentic_workspace.rag")

MAX_SOURCE_BYTES = 16 * 1024 * 1024
INDEX_WORKERS = 4
EMBED_WORKERS = 4
JOB_FILES = 32
JOB_BYTES = 4 * 1024 * 1024
EMBED_BATCH = 64
FOREIGN_CLAIM_S = 600.0
QUIET_S = 5.0
MAX_MOVES = 3
IN_FLIGHT = frozenset({"extraction", "splitting", "embedding"})
HOST = socket.gethostname()


@functools.lru_cache(maxsize=64)
def _tree_files(tree: str) -> TreeFiles:
    return TreeFiles(Path(tree))


def read_source(tree: str, key: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The file's bytes through the workspace's link-refusing walk.

    No link is followed at any depth (a directory swapped for a link after the walk
    saw it is refused, not read through) and a FIFO never blocks; what the card would
    refuse is a permanent :class:`SourceError` here.
    """
    try:
        return _tree_files(tree).read_bytes(key, limit)
    except TooLarge:
        raise SourceError("over 16 MiB", True) from None
    except IsADirectoryError:
        raise SourceError("not a regular file", True) from None
    except RetriableError as error:
        raise SourceError(str(error), True) from None


@dataclass
class _Flight:
    """A file between its index report and its last landed batch."""

    sha: str
    text_name: str
    ids: list[str]
    remaining: int
    failed: str | None = None
    landed: list[str] = field(default_factory=list)


@dataclass
class _Chunk:
    path: str
    sha: str
    text_name: str
    ordinal: int
    chunk_id: str


class RagPipeline:
    """Drains the tree's pending records through the workers (see module docstring)."""

    def __init__(
        self, ctx: RagContext, post: Callable[[Callable[[], None]], None], owner: Any = None
    ) -> None:
        self.ctx = ctx
        self.post = post
        self.id = uuid.uuid4().hex
        lock_path = ctx.records.locks / f"rag-pipeline-{self.id}"
        self._lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._lock_fd, fcntl.LOCK_SH)
        # ``owner`` is the ``#Workspace`` actor: its children do the work in a team.
        self._runner: Runner = (
            ThreadRunner(INDEX_WORKERS, EMBED_WORKERS) if owner is None else ActorRunner(owner)
        )
        self._batch_serial = 0
        self._jobs = 0
        self._batches = 0
        self._queue: list[_Chunk] = []
        self._flights: dict[str, _Flight] = {}
        self._claimed: set[str] = set()
        self._timers: dict[str, threading.Timer] = {}
        self._closed = False
        self._superseded = False
        self.embed_requests = 0

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Stop taking work; running workers finish, their reports are dropped."""
        self._closed = True
        for timer in self._timers.values():
            timer.cancel()
        self._runner.close()
        with contextlib.suppress(OSError):
            os.close(self._lock_fd)

    def busy(self) -> bool:
        """Whether anything is in flight in this pipeline."""
        return bool(self._jobs or self._batches or self._queue or self._flights)

    # ------------------------------------------------------------ claims

    def _claimer_gone(self, claim: dict[str, Any]) -> bool:
        if claim.get("pipeline") == self.id:
            return False
        if claim.get("host") != HOST:
            return time.time() - float(claim.get("at", 0)) > FOREIGN_CLAIM_S
        try:
            fd = os.open(
                self.ctx.records.locks / f"rag-pipeline-{claim.get('pipeline')}", os.O_RDWR
            )
        except FileNotFoundError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)
        return True

    def drain(self) -> None:
        """Requeue abandoned claims, claim pending files, keep the workers fed (mailbox)."""
        if self._closed:
            return
        store = self.ctx.records
        refusal = superseded(store.meta)
        if refusal is not None and not self._superseded:
            # What is in flight still lands (and releases its claims); nothing new is
            # claimed, since newer code would have to redo it.
            self._superseded = True
            log.warning("this pipeline stops claiming files: %s", refusal)
        if self._jobs < INDEX_WORKERS and refusal is None:
            candidates: list[Record] = []
            for record in list(store.snapshot().values()):
                status = record.get("status")
                claim = record.get("claim")
                if claim is not None:
                    if claim.get("pipeline") != self.id and self._claimer_gone(claim):
                        candidates.append(record)
                elif status == "pending":
                    candidates.append(record)
            while candidates and self._jobs < INDEX_WORKERS:
                job: list[Record] = []
                size = 0
                while candidates and len(job) < JOB_FILES and size < JOB_BYTES:
                    claimed = self._claim(candidates.pop(0))
                    if claimed is not None:
                        job.append(claimed)
                        size += int(claimed.get("size", 0))
                if not job:
                    break
                name = f"#index-{self.ctx.scope}-{path_hash(job[0]['path'])[:12]}"
                try:
                    self._runner.start(
                        "index",
                        name,
                        functools.partial(self._index_job, job),
                        self._reported(self._on_index),
                    )
                except RuntimeError:  # shutting down: the claims stay for a resume
                    self._closed = True
                    return
                self._jobs += 1
        self._feed_embedders()

    def _claim(self, seen: Record) -> Record | None:
        store = self.ctx.records
        hexkey = path_hash(seen["path"])
        with store.locked([hexkey]):
            record = store.read(hexkey)
            if record is None:
                return None
            claim = record.get("claim")
            if claim is not None:
                if claim.get("pipeline") == self.id or not self._claimer_gone(claim):
                    return None
                # The claimer died mid-run: what it landed of ``next`` is owed, not served.
                record = _abandon_next(record)
                record["status"] = "pending"
            if record.get("status") != "pending":
                return None
            record["status"] = "extraction"
            record["claim"] = {
                "pipeline": self.id,
                "host": HOST,
                "pid": os.getpid(),
                "at": time.time(),
            }
            record["dirty"] = False
            store.write(record)
        self._claimed.add(record["path"])
        return record

    def _reported(self, handler: Callable[[Any], None]) -> Callable[[Future[Any]], None]:
        def done(future: Future[Any]) -> None:
            if self._closed or future.cancelled():
                return
            try:
                self.post(lambda: handler(future))
            except Exception as error:  # the owner stopped: the claims wait for a resume
                log.info("a worker's report was dropped: %s", error)

        return done

    # ------------------------------------------------------------ index stage

    def _index_job(self, job: list[Record]) -> list[tuple[Record, Any]]:
        results: list[tuple[Record, Any]] = []
        deadline = time.monotonic() + 120.0
        for record in job:
            if time.monotonic() > deadline:
                results.append((record, SourceError("indexing took over 120 s", False)))
                continue
            try:
                results.append((record, self._index_one(record)))
            except SourceError as error:
                results.append((record, error))
            except Exception as error:  # a worker never dies: the file fails, transiently
                results.append((record, SourceError(f"{type(error).__name__}: {error}", False)))
        return results

    def _index_one(self, record: Record) -> str:
        """Extract, split and store the ``next`` set; returns ``moved`` or ``indexed``."""
        ctx = self.ctx
        path = record["path"]
        live = record.get("live")
        fp = ctx.fingerprint
        if (
            live is not None
            and live.get("sha") == record.get("sha")
            and live.get("fingerprint") == fp
            and not live.get("embedded")
            and ctx.store is not None
        ):
            # A keyword-only set gains vectors without being read again.
            self._store_next(record, dict(live), moved=False)
            return "indexed"
        try:
            data = read_source(ctx.tree, path)
        except FileNotFoundError:
            raise SourceError("the file is gone", False) from None
        except OSError as error:
            raise SourceError(f"cannot open: {error.strerror}", True) from None
        sha = hashlib.sha256(data).hexdigest()
        if sha != record.get("sha"):
            return "moved:" + sha
        try:
            st = os.lstat(os.path.join(ctx.tree, path))
            triple: list[int] | None = [st.st_size, st.st_mtime_ns, st.st_ino]
        except OSError:
            triple = None
        ext = os.path.splitext(path)[1].lower()
        text = ctx.extract(path, ext, data) if ext in DOCUMENT_TYPES else _decode(data)
        if not text.strip() and ext in DOCUMENT_TYPES:
            raise SourceError("no text could be extracted", True)
        config: SplitConfig = ctx.split_config
        if ext in (".md",) or ext in DOCUMENT_TYPES:
            pieces = split_markdown(text, config)
        else:
            pieces = split_lines(text, config, csv=ext == ".csv")
        reason = None
        if len(pieces) >= MAX_CHUNKS_PER_FILE:
            reason = f"only the first {MAX_CHUNKS_PER_FILE} chunks are indexed"
        name = ctx.records.text_name(path, sha, fp)
        composed = [
            compose(
                text, p, prepend_heading_path=ctx.prepend_heading, max_chars=ctx.max_input_chars
            )
            for p in pieces
        ]
        ctx.records.put_text(name, composed)
        chunks = [
            {
                "id": chunk_id(ctx.scope, path, sha, fp, i),
                "ordinal": i,
                "start": p.start,
                "end": p.end,
                "start_line": p.start_line,
                "end_line": p.end_line,
                "heading_path": p.heading_path,
            }
            for i, p in enumerate(pieces)
        ]
        next_set = {
            "sha": sha,
            "fingerprint": fp,
            "text": name,
            "chunks": chunks,
            "embedded": False,
            "stat": triple,
        }
        self._store_next(record, next_set, moved=False, reason=reason)
        return "indexed"

    def _store_next(
        self, record: Record, next_set: dict[str, Any], *, moved: bool, reason: str | None = None
    ) -> None:
        store = self.ctx.records
        hexkey = path_hash(record["path"])
        with store.locked([hexkey]):
            now = store.read(hexkey)
            if now is None or (now.get("claim") or {}).get("pipeline") != self.id:
                raise SourceError("the claim was lost", False)
            now["next"] = next_set
            now["status"] = "embedding"
            now["reason"] = reason
            store.write(now)

    def _on_index(self, future: Future[Any]) -> None:
        self._jobs -= 1
        try:
            results = future.result()
        except Exception as error:  # pragma: no cover - _index_job catches per file
            log.warning("an index job failed: %s", error)
            results = []
        for record, outcome in results:
            path = record["path"]
            if isinstance(outcome, SourceError):
                self._fail(path, outcome.reason, outcome.permanent)
            elif outcome.startswith("moved:"):
                self._moved(path, outcome[6:])
            else:
                self._queue_chunks(path)
        self.drain()

    def _moved(self, path: str, sha: str) -> None:
        store = self.ctx.records
        hexkey = path_hash(path)
        with store.locked([hexkey]):
            record = store.read(hexkey)
            if record is None or (record.get("claim") or {}).get("pipeline") != self.id:
                return
            record["claim"] = None
            record["moves"] = int(record.get("moves", 0)) + 1
            record["sha"] = sha
            record["status"] = "stale" if record["moves"] >= MAX_MOVES else "pending"
            store.write(record)
        self._claimed.discard(path)

    def _queue_chunks(self, path: str) -> None:
        store = self.ctx.records
        record = store.read(path_hash(path))
        if record is None or record.get("next") is None:
            return
        next_set = record["next"]
        ids = [c["id"] for c in next_set["chunks"]]
        if self.ctx.store is None or not ids:
            self._finalise(path, next_set["sha"], embedded=False)
            return
        self._flights[path] = _Flight(next_set["sha"], next_set["text"], ids, len(ids))
        for c in next_set["chunks"]:
            self._queue.append(
                _Chunk(path, next_set["sha"], next_set["text"], c["ordinal"], c["id"])
            )

    # ------------------------------------------------------------ embed stage

    def _feed_embedders(self) -> None:
        size = max(1, min(EMBED_BATCH, self.ctx.max_batch))
        # A partial batch waits while index jobs may still fill it (batches span files).
        while (len(self._queue) >= size or (self._queue and self._jobs == 0)) and (
            self._batches < EMBED_WORKERS
        ):
            batch, self._queue = self._queue[:size], self._queue[size:]
            self._batch_serial += 1
            name = f"#embed-workspace_chunks-{self.id[:8]}{self._batch_serial:06d}"
            try:
                self._runner.start(
                    "embed",
                    name,
                    functools.partial(self._embed_batch, batch),
                    self._reported(functools.partial(self._on_embedded, batch)),
                )
            except RuntimeError:  # shutting down: the claims are requeued by the next pipeline
                self._closed = True
                return
            self._batches += 1

    def _embed_batch(self, batch: list[_Chunk]) -> None:
        from akgentic.plugin_api import VectorEntry

        ctx = self.ctx
        if ctx.embedder is None or ctx.store is None:
            raise RuntimeError("no embedder")
        texts = []
        for item in batch:
            stored = ctx.records.get_text(item.text_name)
            texts.append(
                stored[item.ordinal][: ctx.max_input_chars] if item.ordinal < len(stored) else ""
            )
        self.embed_requests += 1
        vectors = ctx.embedder.embed(texts)
        if len(vectors) != len(texts):
            raise RuntimeError(f"the embedder returned {len(vectors)} vectors for {len(texts)}")
        entries = [
            VectorEntry(
                ref_type="workspace_chunk",
                ref_id=item.chunk_id,
                text=text,
                vector=vector,
                scope=ctx.scope,
                path=item.path,
                ordinal=item.ordinal,
            )
            for item, text, vector in zip(batch, texts, vectors, strict=True)
        ]
        ctx.store.add("workspace_chunks", entries)

    def _on_embedded(self, batch: list[_Chunk], future: Future[Any]) -> None:
        self._batches -= 1
        error = future.exception()
        for item in batch:
            flight = self._flights.get(item.path)
            if flight is None or flight.sha != item.sha:
                continue
            flight.remaining -= 1
            if error is None:
                flight.landed.append(item.chunk_id)
            elif flight.failed is None:
                flight.failed = f"embedding failed: {error}"
                log.warning("embedding %s failed: %s", item.path, error)
            if flight.remaining == 0:
                del self._flights[item.path]
                if flight.failed is None:
                    self._finalise(item.path, flight.sha, embedded=True)
                else:
                    self._fail(item.path, flight.failed, False, landed=flight.landed)
        self.drain()

    # ------------------------------------------------------------ outcomes

    def _finalise(self, path: str, sha: str, *, embedded: bool) -> None:
        """``next`` becomes ``live`` in one write; old ids not in the new set are removed."""
        store = self.ctx.records
        hexkey = path_hash(path)
        with store.locked([hexkey]):
            record = store.read(hexkey)
            self._claimed.discard(path)
            if record is None or (record.get("claim") or {}).get("pipeline") != self.id:
                return
            next_set = record.get("next")
            if next_set is None or next_set.get("sha") != sha:
                return
            next_set["embedded"] = embedded
            next_set["stat"] = next_set.get("stat") or record.get("stat")
            record["stat"] = next_set["stat"]
            old = record.get("live") or {}
            new_ids = {c["id"] for c in next_set["chunks"]}
            doomed = [c["id"] for c in old.get("chunks", []) if c["id"] not in new_ids]
            doomed += [i for i in record.get("owed", []) if i not in new_ids]
            record["owed"] = self._remove(doomed)
            record["live"] = next_set
            record["next"] = None
            record["claim"] = None
            record["moves"] = 0
            if record.get("dirty"):
                record["status"] = "stale"
            else:
                record["status"] = "embedded" if embedded else "keyword"
            record["permanent"] = False
            record["dirty"] = False
            record["indexed_at"] = time.time()
            store.write(record)
        if old.get("text") and old.get("text") != next_set.get("text"):
            store.drop_text(old["text"])

    def _fail(
        self, path: str, reason: str, permanent: bool, landed: list[str] | None = None
    ) -> None:
        """The run failed: ``next`` is dropped (its landed ids removed); ``live`` stays unless
        older code made it from bytes this code refuses for good.
        """
        store = self.ctx.records
        hexkey = path_hash(path)
        with store.locked([hexkey]):
            record = store.read(hexkey)
            self._claimed.discard(path)
            if record is None or (record.get("claim") or {}).get("pipeline") != self.id:
                return
            record = _abandon_next(record, landed)
            live = record.get("live") or {}
            dropped = None
            if (
                permanent
                and live
                and live.get("sha") == record.get("sha")
                and live.get("fingerprint") != self.ctx.fingerprint
            ):
                # Older code indexed these very bytes, and this code refuses them for good
                # (e.g. a corrupt PDF once indexed as its raw bytes): that passage is not
                # the file's content, so it stops being served rather than kept as "old".
                owed = set(record.get("owed", []))
                owed.update(c["id"] for c in live.get("chunks", []))
                record["owed"] = sorted(owed)
                record["live"] = None
                dropped = live.get("text")
            record["owed"] = self._remove(record.get("owed", []))
            record["status"] = "failed"
            record["reason"] = reason
            record["permanent"] = permanent
            # Another splitter or extractor may read these bytes: the failure is for good
            # only under the fingerprint it happened with.
            record["failed_fingerprint"] = self.ctx.fingerprint if permanent else None
            record["claim"] = None
            store.write(record)
        if dropped:
            store.drop_text(dropped)

    def _remove(self, ids: list[str]) -> list[str]:
        """Remove store rows (scoped); what could not be removed stays owed."""
        if not ids or self.ctx.store is None:
            return [] if self.ctx.store is not None else list(ids)
        try:
            self.ctx.store.remove("workspace_chunks", list(ids), scope=self.ctx.scope)
        except Exception as error:
            log.warning("removing %d rows failed (owed): %s", len(ids), error)
            return list(ids)
        return []

    # ------------------------------------------------------------ writes

    def written(self, keys: list[str]) -> None:
        """``reindex_on_write``: pass over ``keys`` after 5 s without another write (mailbox)."""
        for key in keys:
            timer = self._timers.pop(key, None)
            if timer is not None:
                timer.cancel()
            fresh = threading.Timer(QUIET_S, lambda k=key: self.post(lambda: self._requeue(k)))
            fresh.daemon = True
            self._timers[key] = fresh
            fresh.start()

    def _requeue(self, key: str) -> None:
        self._timers.pop(key, None)
        try:
            self.ctx.queue_paths([key], force=False)
        except Exception as error:
            log.warning("re-index of %s after a write failed: %s", key, error)
        self.drain()


def _abandon_next(record: Record, landed: list[str] | None = None) -> Record:
    """Drop ``next``; its ids not in ``live`` become owed (they may have landed)."""
    next_set = record.get("next")
    if next_set is not None:
        live_ids = {c["id"] for c in (record.get("live") or {}).get("chunks", [])}
        ids = [c["id"] for c in next_set["chunks"]] if landed is None else landed
        owed = set(record.get("owed", []))
        owed.update(i for i in ids if i not in live_ids)
        record["owed"] = sorted(owed)
        record["next"] = None
    return record


def _decode(data: bytes) -> str:
    nul = data.find(b"\x00", 0, 8192)
    if nul >= 0:
        raise SourceError(f"binary content: a NUL byte at offset {nul}", True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SourceError(
            f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset {error.start}", True
        ) from None
