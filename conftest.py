"""What every test of the repository, under ``tests/`` and ``plugins/``, is checked for.

``filterwarnings = error`` turns a ``ResourceWarning`` into a failure, but one raised
while the garbage collector frees a leaked object fails whichever test is running
then, not the one that leaked it. The leaks that can be seen at a test's end are
checked here, so the test that leaks fails, every time, under any load.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest


def _current_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop set for this thread, without creating one (asyncio's getter would)."""
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


@pytest.fixture(autouse=True)
def _no_event_loop_left_open() -> Iterator[None]:
    """Fail a test that leaves an open event loop set as its thread's current loop.

    Nobody closes such a loop: the next ``set_event_loop`` (any ``asyncio.run``, any
    ``ReactAgent``) drops it, and the collector later frees it and its self-pipe
    socket with a ``ResourceWarning`` in an unrelated test. pydantic-ai's
    ``Agent.run_sync`` leaves one; ``asyncio.run(agent.run(...))`` closes its loop.
    """
    before = _current_loop()
    yield
    after = _current_loop()
    if after is None or after is before or after.is_closed() or after.is_running():
        return
    after.close()  # closed here, so no later test is failed by its warning
    pytest.fail(
        f"the test left an open event loop as the thread's current loop ({after!r}): "
        "close it (pydantic-ai's run_sync leaves one; use asyncio.run(agent.run(...)))"
    )
