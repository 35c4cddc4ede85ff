"""Where the pipeline's slow work runs: child actors of ``#Workspace``, or threads without one.

In a team each index job and each embedding batch runs in its own child actor of the
tree's ``#Workspace`` (``#index-<scope>-<12 hex>``, ``#embed-workspace_chunks-<id>``):
the worker does the job on its own thread, tells the outcome to the workspace actor's
mailbox and stops. The pipeline bounds how many run at once. A card bound outside a
team has no actor to own children, so the same jobs run on two small thread pools.

Workers stay out of the team's log, so a restore never brings one back: the records
say what is left to do, and the next pipeline requeues what a dead one had claimed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from akgentic.plugin_api import Akgent, BaseConfig, BaseState

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
    """A worker's name and role (``#index-…`` / ``#embed-…``, ``RagWorker``)."""


class RagWorker(Akgent[RagWorkerConfig, BaseState]):
    """One job of ``#Workspace``'s pipeline, run on this actor's thread, then stopped."""

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


class ActorRunner:
    """Child actors of ``owner`` (the ``#Workspace`` actor), one per job.

    A worker is started with ``owner`` as its parent but without the orchestrator:
    it never enters the team's log, so a restore cannot bring it back and a pass over
    10 000 files does not add a start and a stop per job to the log.
    """

    def __init__(self, owner: Any) -> None:
        self._owner = owner
        self._live: set[Any] = set()
        self._closed = False

    def start(self, kind: str, name: str, work: Work, done: Done) -> None:
        """Start the worker and tell it the job (on the owner's thread)."""
        from akgentic.plugin_api import ProxyWrapper, address_of

        if self._closed:
            raise RuntimeError("the pipeline is closed")
        owner = self._owner
        config = RagWorkerConfig(name=name, role=WORKER_ROLE)
        try:
            ref = RagWorker.start(
                team_id=owner.team_id,
                config=config,
                user_id=owner.user_id,
                parent=owner.myAddress,
                orchestrator=None,
            )
        except Exception as error:  # the system is stopping: the claims wait for a resume
            raise RuntimeError(f"cannot start {name}: {error}") from error
        self._live = {r for r in self._live if r.is_alive()}
        self._live.add(ref)
        ProxyWrapper(address_of(ref), ask=False).run(work, done)

    def close(self) -> None:
        """Start no more workers; running ones finish their job, then stop."""
        self._closed = True
        for ref in self._live:
            with contextlib.suppress(Exception):
                ref.stop(block=False)  # queued behind the job it is running
        self._live.clear()
