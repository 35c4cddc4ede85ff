"""The process's pool of store writers, shared by every team's persistence.

A :class:`~akgentic.team.subscribers.persistence.PersistenceSubscriber` used to
own one writer thread for as long as its team ran: one thread per live team,
mostly waiting. Here a few daemon threads run the writes of every team instead.
A subscriber with records queued *submits* itself (at most once at a time, so a
team's batches are still written one after the other, in order); a worker
writes one batch and submits the subscriber again if more queued meanwhile, so
a team under a flood takes turns with the others instead of holding a worker.

Workers are started when a job finds none idle (up to ``max_workers``) and end
after ``idle_timeout`` seconds without work, so a process with no write to make
holds no writer thread. A store stuck on one write holds one worker; the
others go on serving the teams of other stores.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["DEFAULT_MAX_WRITERS", "WriterPool", "writer_pool"]

logger = logging.getLogger(__name__)

#: Most writer threads a process runs at once, whatever the number of teams.
DEFAULT_MAX_WRITERS = 32
#: Seconds a worker waits for work before it ends.
_IDLE_TIMEOUT = 5.0


class WriterPool:
    """Daemon threads running jobs, started on demand and ended when idle.

    The process's store writers are one (see the module docstring); a
    :class:`~akgentic.team.manager.TeamManager` runs its activations on another,
    ``max_workers`` of them at once and the rest queued.
    """

    def __init__(
        self,
        max_workers: int = DEFAULT_MAX_WRITERS,
        idle_timeout: float = _IDLE_TIMEOUT,
        *,
        name: str = "akgentic-writer",
    ) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, not {max_workers}")
        self.max_workers = max_workers
        self.idle_timeout = idle_timeout
        self.name = name
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0
        self._queued = 0
        self._numbers = 0

    @property
    def workers(self) -> int:
        """Writer threads alive now."""
        return self._workers

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job()`` on a worker (it must not raise; an error is logged)."""
        with self._lock:
            self._jobs.put(job)
            self._queued += 1
            if self._queued > self._idle and self._workers < self.max_workers:
                self._workers += 1
                self._numbers += 1
                number = self._numbers
            else:
                return
        try:
            threading.Thread(target=self._work, name=f"{self.name}-{number}", daemon=True).start()
        except BaseException:
            with self._lock:
                self._workers -= 1
            raise

    def _work(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            with lock:
                self._idle += 1
            try:
                job = jobs.get(True, self.idle_timeout)
            except queue.Empty:
                with lock:
                    self._idle -= 1
                    if self._queued == 0:
                        self._workers -= 1
                        return
                continue
            with lock:
                self._idle -= 1
                self._queued -= 1
            try:
                job()
            except BaseException:  # a job is expected to handle its errors
                logger.exception("a store writer job failed")


_pool: WriterPool | None = None
_pool_lock = threading.Lock()


def writer_pool() -> WriterPool:
    """The process's writer pool (created on first use)."""
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            pool = _pool
            if pool is None:
                pool = _pool = WriterPool()
    return pool
