"""The spawner process of the bwrap backend (run as a script, standard library only).

One spawner lives per backend instance. The backend sends it one request at a time
over a Unix socket: a JSON message (argv, environment, rlimits) with the write ends of
the output pipes attached. The spawner forks — cheap, it is a small process — and the
child starts a new session, takes the pipes as stdout/stderr, sets the rlimits and
execs bubblewrap, its options (``options``) read from a memory file (``--args FD``)
rather than its command line, which the sandbox can read as ``/proc/1/cmdline``.
The spawner answers with the child's pid, then with its exit code.

Why a separate process: joining the pids cgroup is slow (a cgroup v1 migration waits
for an RCU grace period) and forking the large akgentic process costs page tables on
every run. The spawner joins the cgroup once, at start, and everything it forks is
born inside it. When the backend goes away (its socket closes) the spawner kills the
running process group and exits; bubblewrap's --die-with-parent does the rest.
"""

import contextlib
import json
import os
import resource
import select
import signal
import socket
import sys
from typing import Any

_MAX_MESSAGE = 1 << 20


def _receive(sock: socket.socket) -> tuple[bytes, list[int]]:
    fds: list[int] = []
    message, ancillary, _flags, _addr = sock.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(16))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds.extend(int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, usable, 4))
    return message, fds


def _child(request: dict[str, Any], fds: list[int]) -> None:
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])  # the socket too
        for which, value in request["rlimits"]:
            resource.setrlimit(which, (value, value))
        argv = request["argv"]
        if request.get("options"):
            # handed over in a memory file, so that they are in no command line
            args = os.memfd_create("bwrap-args", 0)
            os.write(args, b"".join(o.encode() + b"\0" for o in request["options"]))
            os.lseek(args, 0, os.SEEK_SET)
            argv = [argv[0], "--args", str(args), *argv[1:]]
        os.execve(argv[0], argv, request["env"])
    except BaseException as exc:  # a forked child must never return into the loop
        os.write(2, f"bwrap spawner: could not start {request['argv'][0]}: {exc}\n".encode())
    os._exit(127)


def _serve(sock: socket.socket) -> None:
    while True:
        message, fds = _receive(sock)
        if not message:
            return  # the backend closed its end
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            _child(request, fds)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        sock.sendall(json.dumps({"pid": pid}).encode())
        while True:
            ready, _, _ = select.select([sock.fileno(), pidfd], [], [])
            if pidfd in ready:
                _, status = os.waitpid(pid, 0)
                os.close(pidfd)
                sock.sendall(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
                break
            if sock.recv(_MAX_MESSAGE):
                continue  # nothing is sent mid-run; a stray message is dropped
            # the backend is gone mid-run: take the run down with it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    try:
        _serve(sock)
    finally:
        sock.close()


if __name__ == "__main__":
    main()
