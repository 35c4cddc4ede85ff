"""A private Docker engine and a local image for tests, CI and benchmarks.

No registry is reachable on a CI runner, and a shared engine would mix other people's
containers with ours, so :class:`LocalEngine` starts its own ``dockerd`` (vfs storage,
no iptables, no bridge) with data, exec root and socket in a temporary directory, and
imports a minimal image built from the host's ``busybox`` binary. It needs root and
the ``docker.io`` and ``busybox-static`` packages; :meth:`LocalEngine.start` raises
:class:`EngineUnavailable` with the reason otherwise.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
from pathlib import Path
from types import TracebackType

from akgentic.testing.waiting import poll_until

__all__ = ["BUSYBOX_IMAGE", "EngineUnavailable", "LocalEngine"]

#: The tag of the image imported from busybox.
BUSYBOX_IMAGE = "akgentic-sandbox-busybox:local"
_BUSYBOX_PATHS = ("/bin/busybox", "/usr/bin/busybox")


class EngineUnavailable(RuntimeError):  # noqa: N818 - reads as a state, like SandboxNotReady
    """The private engine could not be started here (the message says why)."""


def _busybox_tar(busybox: str) -> bytes:
    applets = subprocess.run(
        [busybox, "--list"], capture_output=True, text=True, check=True, timeout=10
    ).stdout.split()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for directory in ("bin", "etc", "tmp", "home", "home/sandbox", "workspace", "proc",
                          "dev", "sys", "usr", "usr/bin"):  # fmt: skip
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if directory == "tmp" else 0o755
            tar.addfile(info)
        tar.add(busybox, arcname="bin/busybox")
        for applet in applets:
            if applet == "busybox":
                continue
            link = tarfile.TarInfo(f"bin/{applet}")
            link.type, link.linkname = tarfile.SYMTYPE, "busybox"
            tar.addfile(link)
        passwd = "root:x:0:0:root:/root:/bin/sh\nsandbox:x:65534:65534::/home/sandbox:/bin/sh\n"
        for name, text in (("etc/passwd", passwd), ("etc/group", "root:x:0:\nsandbox:x:65534:\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class LocalEngine:
    """A ``dockerd`` of our own on a socket in a temporary directory."""

    def __init__(self, start_timeout_s: float = 60.0) -> None:
        self.start_timeout_s = start_timeout_s
        self.root: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.host = ""

    def start(self) -> LocalEngine:
        """Start the engine and import :data:`BUSYBOX_IMAGE`; raise EngineUnavailable."""
        dockerd = shutil.which("dockerd")
        docker = shutil.which("docker")
        busybox = next((p for p in _BUSYBOX_PATHS if os.path.isfile(p)), None)
        if dockerd is None or docker is None:
            raise EngineUnavailable("dockerd is not installed (apt install docker.io)")
        if busybox is None:
            raise EngineUnavailable("busybox is not installed (apt install busybox-static)")
        if os.geteuid() != 0:
            raise EngineUnavailable("starting a private dockerd needs root")
        self.root = Path(tempfile.mkdtemp(prefix="akgd-"))
        socket = self.root / "docker.sock"
        self.host = f"unix://{socket}"
        log = open(self.root / "dockerd.log", "wb")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen(
                [dockerd, "--storage-driver=vfs", "--iptables=false", "--ip6tables=false",
                 "--bridge=none", f"--data-root={self.root / 'data'}",
                 f"--exec-root={self.root / 'exec'}", f"--pidfile={self.root / 'docker.pid'}",
                 "-H", self.host],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()
        process = self.process
        # Settled: the engine answers, or it exited (and never will).
        settled = poll_until(
            lambda: self._answers(docker) or process.poll() is not None,
            self.start_timeout_s,
            interval=0.2,
        )
        if not settled or process.poll() is not None:
            tail = (self.root / "dockerd.log").read_text("utf-8", "replace")[-600:]
            self.stop()
            raise EngineUnavailable(f"dockerd did not start: {tail.strip()}")
        imported = subprocess.run(
            [docker, "-H", self.host, "import", "-", BUSYBOX_IMAGE],
            input=_busybox_tar(busybox), capture_output=True, timeout=120, check=False,
        )  # fmt: skip
        if imported.returncode != 0:
            self.stop()
            raise EngineUnavailable(f"could not import the busybox image: {imported.stderr!r}")
        return self

    def _answers(self, docker: str) -> bool:
        done = subprocess.run(
            [docker, "-H", self.host, "version"], capture_output=True, timeout=10, check=False
        )
        return done.returncode == 0

    def stop(self) -> None:
        """Stop the engine (SIGTERM, then SIGKILL after 20 s) and delete its files."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None
        if self.root is not None:
            subprocess.run(["umount", "-R", "-l", str(self.root)], capture_output=True, check=False)
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> LocalEngine:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
