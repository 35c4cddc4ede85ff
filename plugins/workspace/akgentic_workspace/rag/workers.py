"""Where the pipeline's slow work runs: child actors of ``#Workspace``, or threads without one.

In a team each index job and each embedding batch runs in its own child actor of the
tree's ``#Workspace`` (``#index-<scope>-<12 hex>``, ``#embed-workspace_chunks-<id>``):
the worker does the job on its own thread, tells the outcome to the workspace actor's
mailbox and stops. The pipeline bounds how many run at once. A card bound outside a
team has no actor to own children, so the same jobs run on two small thread pools.

A worker that a team restore brings back finds the pipeline that started it gone
(its lock file can be taken exclusively) and stops at once: workers are never resumed,
the records say what is left to do.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState

__all__ = [
    "WORKER_ROLE",
    "ActorRunner",
    "RagWorker",
    "RagWorkerConfig",
    "Runner",
    "ThreadRunner",
]

log = logging.getLogger("akgentic_workspace.rag")

WORKER_ROLE = "RagWorker"

Work = Callable[[], Any]
Done = Callable[["Future[Any]"], None]


class Runner(Protocol):
    """Starts one job; ``done`` gets a finished future (on the worker's thread)."""

    def start(self, kind: str, name: str, work: Work, done: Done) -> None:
        """Run ``work`` off the caller's thread; RuntimeError when no longer possible."""

    def close(self) -> None:
        """Stop starting jobs (running ones finish; their reports may be dropped)."""


class ThreadRunner:
    """Bounded thread pools: 4 index and 4 embed threads (cards outside a team)."""

    def __init__(self, index_workers: int, embed_workers: int) -> None:
        self._pools = {
            "index": ThreadPoolExecutor(index_workers, thread_name_prefix="rag-index"),
            "embed": ThreadPoolExecutor(embed_workers, thread_name_prefix="rag-embed"),
        }

    def start(self, kind: str, name: str, work: Work, done: Done) -> None:
        """Submit ``work`` to the pool of ``kind``."""
        del name  # threads are not named per job
        self._pools[kind].submit(work).add_done_callback(done)

    def close(self) -> None:
        """Shut both pools down without waiting; queued jobs are cancelled."""
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)


class RagWorkerConfig(BaseConfig):
    """A worker's name and role, and the lock file of the pipeline that started it."""

    pipeline_lock: str = ""


class RagWorker(Akgent[RagWorkerConfig, BaseState]):
    """One job of ``#Workspace``'s pipeline, run on this actor's thread, then stopped."""

    def on_start(self) -> None:
        """Stop at once when the pipeline that started this worker is gone (a restore)."""
        super().on_start()
        if _lock_is_free(self.config.pipeline_lock):
            log.info("%s: its pipeline is gone; not resumed", self.config.name)
            self.stop()

    def run(self, work: Work, done: Done) -> None:
        """Do ``work``, hand its outcome to ``done`` (which posts to the owner), stop."""
        future: Future[Any] = Future()
        try:
            future.set_result(work())
        except BaseException as error:  # the owner decides what a failure means
            future.set_exception(error)
        try:
            done(future)
        finally:
            self.stop()


def _lock_is_free(path: str) -> bool:
    if not path:
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return True


class ActorRunner:
    """Child actors of ``owner`` (the ``#Workspace`` actor), one per job."""

    def __init__(self, owner: Any, pipeline_lock: str) -> None:
        self._owner = owner
        self._lock = pipeline_lock
        self._closed = False

    def start(self, kind: str, name: str, work: Work, done: Done) -> None:
        """Create the worker under ``owner`` and tell it the job (on the owner's thread)."""
        from akgentic.core.proxy import ProxyWrapper

        if self._closed:
            raise RuntimeError("the pipeline is closed")
        config = RagWorkerConfig(name=name, role=WORKER_ROLE, pipeline_lock=self._lock)
        try:
            address = self._owner.createActor(RagWorker, config=config)
        except Exception as error:  # the system is stopping: the claims wait for a resume
            raise RuntimeError(f"cannot start {name}: {error}") from error
        ProxyWrapper(address, ask=False).run(work, done)

    def close(self) -> None:
        """Start no more workers; the owner stops the running ones with itself."""
        self._closed = True
