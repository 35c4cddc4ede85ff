"""The backend's side of the spawner process (see ``_spawner_main``)."""

from __future__ import annotations

import array
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from akgentic.plugin_api import SandboxError

__all__ = ["Spawner"]

_MAIN = str(Path(__file__).with_name("_spawner_main.py"))


def _join_cgroup(procs_file: str) -> Callable[[], None]:
    def join() -> None:
        fd = os.open(procs_file, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    return join


class Spawner:
    """A small long-lived process that forks and execs bubblewrap on request.

    Started inside the backend's pids cgroup (when there is one), so every process it
    forks is born there. One request at a time: :meth:`spawn`, then :meth:`wait`.
    """

    def __init__(self, procs_file: str | None) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-E", "-s", _MAIN, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_join_cgroup(procs_file) if procs_file else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            ours.close()
            raise SandboxError(f"could not start the bwrap spawner: {exc}") from exc
        finally:
            theirs.close()
        self._sock = ours

    @property
    def alive(self) -> bool:
        """True while the spawner process runs."""
        return self.process.poll() is None

    def _reply(self, timeout: float | None) -> dict[str, Any] | None:
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(4096)
        except TimeoutError:
            return None
        except OSError as exc:
            raise SandboxError(f"the bwrap spawner failed: {exc}") from exc
        if not data:
            raise SandboxError("the bwrap spawner exited unexpectedly")
        reply: dict[str, Any] = json.loads(data)
        return reply

    def spawn(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        rlimits: Sequence[tuple[int, int]],
        stdout: int,
        stderr: int,
        options: Sequence[str] = (),
    ) -> int:
        """Start ``argv`` (absolute path first) with the given pipes; return its pid.

        ``options``, when given, reach the program through ``--args FD`` (bubblewrap's
        NUL-separated option file), placed before the rest of ``argv``.
        """
        request = json.dumps(
            {
                "argv": list(argv),
                "options": list(options),
                "env": dict(env),
                "rlimits": list(rlimits),
            }
        )
        fds = array.array("i", [stdout, stderr])
        try:
            self._sock.sendmsg(
                [request.encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())]
            )
        except OSError as exc:
            raise SandboxError(f"the bwrap spawner is not answering: {exc}") from exc
        reply = self._reply(30.0)
        if reply is None or "pid" not in reply:
            raise SandboxError("the bwrap spawner did not start the command")
        return int(reply["pid"])

    def wait(self, timeout: float | None) -> int | None:
        """The exit code of the spawned process (``-N`` for signal N), None on timeout."""
        reply = self._reply(timeout)
        return None if reply is None else int(reply["exit"])

    def close(self) -> None:
        """Close the socket; the spawner kills what runs and exits."""
        self._sock.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
