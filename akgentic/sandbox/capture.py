"""Bounded capture of a child's output stream: head and tail kept, the rest counted.

A reader keeps draining the pipe whatever the child writes, so a flood never blocks
the child on a full pipe nor grows memory past the limit.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time

__all__ = ["StreamCapture", "drain_in_thread", "pump_pipes"]

_CHUNK = 65536


class StreamCapture:
    """Keeps the first quarter and the last three quarters of ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head_limit = limit // 4
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        """Account for one chunk read from the stream."""
        with self._lock:
            self.total += len(chunk)
            room = self._head_limit - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self._tail += chunk
                excess = len(self._tail) - self._tail_limit
                if excess > 0:
                    del self._tail[:excess]

    @property
    def truncated(self) -> bool:
        """True when some of the stream was dropped."""
        return self.total > self.limit

    def text(self) -> str:
        """What was kept, decoded as UTF-8 with bad bytes replaced."""
        with self._lock:
            data = bytes(self._head) + bytes(self._tail)
        return data.decode("utf-8", errors="replace")


def drain_in_thread(fd: int, capture: StreamCapture, name: str) -> threading.Thread:
    """Start a daemon thread that reads ``fd`` to its end into ``capture``, then closes it."""

    def pump() -> None:
        try:
            while True:
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                capture.feed(chunk)
        except OSError:
            return  # the descriptor was closed under us by a forced shutdown
        finally:
            with contextlib.suppress(OSError):  # already closed by the shutdown path
                os.close(fd)

    thread = threading.Thread(target=pump, name=name, daemon=True)
    thread.start()
    return thread


def pump_pipes(pipes: dict[int, StreamCapture], deadline: float) -> bool:
    """Read every descriptor in ``pipes`` into its capture until EOF or ``deadline``.

    Runs on the calling thread (no reader threads to start per run). Descriptors that
    reached EOF are closed and removed from ``pipes``; returns True when all did,
    False when ``deadline`` (a ``time.monotonic()`` value) came first.
    """
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        while pipes:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            for key, _events in selector.select(left):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    chunk = b""  # treat a read error like the end of the stream
                if chunk:
                    pipes[fd].feed(chunk)
                    continue
                selector.unregister(fd)
                os.close(fd)
                del pipes[fd]
    return True
