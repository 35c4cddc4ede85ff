"""A pytest plugin that fails a test which leaves an open event loop behind.

Opt in with ``-p akgentic.testing.loop_guard`` (this repository's ``addopts`` does).

With ``filterwarnings = error`` a ``ResourceWarning`` fails a test, but one raised
while the garbage collector frees a leaked object fails whichever test is running
then, not the one that leaked it: an unclosed event loop warns first, which aborts
its ``__del__`` before it closes its self-pipe, so each of that socketpair's ends
warns ``unclosed <socket.socket ... family=1, type=1>`` too. A loop left as the
thread's current loop is such a leak, and it can be seen at the test's end: nobody
closes it, and the next ``set_event_loop`` (any ``asyncio.run``, any ``ReactAgent``)
drops it for the collector. Checked here, the test that leaks fails, every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

__all__ = ["current_event_loop"]


def current_event_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop set for this thread, or None; never creates one (asyncio's getter may)."""
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


@pytest.fixture(autouse=True)
def _no_event_loop_left_open() -> Iterator[None]:
    """Fail a test that leaves an open event loop set as its thread's current loop.

    A loop set before the test (a module fixture's agent, closed by that fixture)
    is not the test's. pydantic-ai's ``Agent.run_sync`` leaves one;
    ``asyncio.run(agent.run(...))`` closes its loop.
    """
    before = current_event_loop()
    yield
    after = current_event_loop()
    if after is None or after is before or after.is_closed() or after.is_running():
        return
    after.close()  # closed here, so no later test is failed by its warnings
    pytest.fail(
        f"the test left an open event loop as the thread's current loop ({after!r}): "
        "close it (pydantic-ai's run_sync leaves one; use asyncio.run(agent.run(...)))"
    )
