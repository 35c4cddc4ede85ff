"""The exec lease across processes: a holder blocks changes, and its death frees the tree.

The holder is a real interpreter taking the lease the way the exec service does (an
exclusive ``flock`` on ``<meta>/exec.lock`` plus a marker), then SIGKILLed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.errors import RetriableError

HOLDER = textwrap.dedent(
    """
    import fcntl, json, os, signal, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    marker = {"run_id": "cafe0001", "agent_name": "@Holder", "started_at": time.time(),
              "budget_s": 15}
    os.pwrite(fd, json.dumps(marker).encode(), 0)
    print("held", flush=True)
    signal.pause()  # hold the lease until the test kills this process
    """
)


def test_a_dead_holder_frees_the_tree_at_once(
    make_agent: Callable[..., Any], workspaces_root: Path
) -> None:
    a = make_agent("@A")
    a.write("a.txt", "x")
    lease = workspaces_root / "alice" / "_id" / "p.index" / "exec.lock"
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lease)], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            with pytest.raises(
                RetriableError, match=r"exec run cafe0001 is in progress \(agent '@Holder'\)"
            ):
                a.write("a.txt", "y")
            assert "x" in a.read("a.txt")  # reads go on
        finally:
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(timeout=10)
    # The kernel dropped the dead process's lock: admitted at once, no staleness wait.
    assert a.write("a.txt", "y") == "Written: a.txt"
