"""An asyncio loop on a thread of its own, so synchronous code can drive nats-py."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

_T = TypeVar("_T")


class LoopThread:
    """Runs coroutines on a private event loop thread (``run`` waits for the result)."""

    def __init__(self, name: str = "akgentic-nats") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        """Run ``coroutine`` on the loop and return its result (raises what it raised)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        """Start ``coroutine`` on the loop without waiting for it."""
        asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def stop(self) -> None:
        """Stop the loop and its thread, then close the loop.

        Closing releases the loop's selector and self-pipe sockets; a loop only stopped
        keeps them until garbage collection. A loop still running after 5 s (a callback
        that does not return) cannot be closed and is left to its daemon thread.
        """
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5.0)
        if not self._thread.is_alive():
            self.loop.close()
