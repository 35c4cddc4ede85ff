"""A pids cgroup that bounds how many processes one sandbox may hold at once.

``RLIMIT_NPROC`` is counted per host user and the kernel never enforces it for host
root; when akgentic runs as root, bubblewrap's sandbox user maps to root, so the
rlimit alone would not stop a fork bomb. Where the host offers a writable pids
controller (cgroup v2 with ``pids`` enabled, or the v1 ``pids`` hierarchy), each
backend gets a cgroup of its own whose ``pids.max`` holds the limit.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from pathlib import Path

__all__ = ["PidsCgroup", "find_pids_root"]

_V1 = Path("/sys/fs/cgroup/pids")
_V2 = Path("/sys/fs/cgroup")
_counter = itertools.count()


def find_pids_root() -> Path | None:
    """A writable cgroup directory under which pids cgroups can be made, if any."""
    if (_V1 / "cgroup.procs").exists() and os.access(_V1, os.W_OK):
        return _V1
    controllers = _V2 / "cgroup.subtree_control"
    with contextlib.suppress(OSError):
        if "pids" in controllers.read_text().split() and os.access(_V2, os.W_OK):
            return _V2
    return None


class PidsCgroup:
    """One cgroup whose ``pids.max`` bounds the processes of the runs placed in it."""

    def __init__(self, root: Path, max_pids: int) -> None:
        self.path = root / f"akgentic-sandbox-{os.getpid()}-{next(_counter)}"
        self.path.mkdir(mode=0o755)
        (self.path / "pids.max").write_text(str(max_pids))
        self.procs_file = str(self.path / "cgroup.procs")

    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(line) for line in text.split()]

    def remove(self, wait_s: float = 2.0) -> None:
        """Remove the cgroup once its processes are gone (they are being killed)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() >= deadline:
                    return  # still busy: left for the kernel; harmless and reported nowhere
                time.sleep(0.01)
