"""``DockerBackend``: each command in its own locked-down container."""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from akgentic.plugin_api import (
    MOUNT_POINT,
    SANDBOX_HOME,
    SANDBOX_TMP,
    TIMEOUT_EXIT_CODE,
    ExecResult,
    ResourceLimits,
    SandboxError,
    SandboxNotReady,
    StreamCapture,
    base_environment,
    sandbox_cwd,
    scrub_tree,
)
from akgentic_docker.availability import unix_socket_refusal

__all__ = ["DEFAULT_IMAGE", "ENV_IMAGE", "DockerBackend"]

#: Environment variable naming the image commands run in.
ENV_IMAGE = "AKGENTIC_SANDBOX_IMAGE"
#: The image used when neither the constructor nor ``AKGENTIC_SANDBOX_IMAGE`` names one.
DEFAULT_IMAGE = "python:3.12-slim"
#: Label on every container this backend makes (``docker ps -f label=akgentic.sandbox``).
LABEL = "akgentic.sandbox"
_DRAIN_WAIT_S = 5.0
_REMOVE_TIMEOUT_S = 10


class DockerBackend:
    """Runs each command in a fresh container that is removed afterwards.

    The container has no network (``--network none`` unless ``limits.network``), a
    read-only root, no capabilities, ``no-new-privileges``, a pids, memory and rlimit
    ceiling from the limits, size-limited tmpfs for ``/tmp`` and the home, and the tree
    bound at ``/workspace`` as its only writable mount. A run owns its container, so
    a timeout or :meth:`kill` ends every process of it. ``no-new-privileges`` makes a
    setuid file inert inside; after every run the tree is scrubbed of setuid/setgid
    bits and device nodes (:func:`akgentic.sandbox.scrub_tree`), since a file made as
    the container user is a file of that user on the host. ``prepare`` makes sure the
    image is present (pulling it when missing): that cold start is reported as the
    first result's ``prepare_s``, apart from the run's own time.

    Args:
        image: The image (default ``$AKGENTIC_SANDBOX_IMAGE``, else ``python:3.12-slim``).
        user: ``uid:gid`` inside the container (default: the host process's own, so
            files in the tree keep their owner).
        base_url: The engine (default: ``$DOCKER_HOST``, else the local socket).
    """

    name = "docker"

    def __init__(
        self,
        *,
        image: str | None = None,
        user: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.image = image or env.get(ENV_IMAGE, "").strip() or DEFAULT_IMAGE
        self.user = user or f"{os.getuid()}:{os.getgid()}"
        self._base_url = base_url
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._client: Any = None
        self._tree: Path | None = None
        self._limits: ResourceLimits | None = None
        self._pull: threading.Thread | None = None
        self._pull_error: str | None = None
        self._ready = False
        self._prepare_s = 0.0
        self._prepare_unreported = False
        self._current: str | None = None
        self._running = False  # a run is between its start and its result
        self._killed = False

    # -- lifecycle --------------------------------------------------------
    def prepare(self, tree: Path, *, limits: ResourceLimits, timeout_s: float) -> None:
        """Bind to ``tree`` and make sure the image is present, within ``timeout_s``."""
        begin = time.monotonic()
        tree = Path(os.path.abspath(tree))
        with self._lock:
            if self._tree is not None and (tree != self._tree or limits != self._limits):
                raise SandboxError(f"this backend is already prepared for {self._tree}")
            if self._ready:
                return
            if tree.is_symlink() or not tree.is_dir():
                raise SandboxError(f"sandbox tree {tree} is not a directory")
            self._tree, self._limits = tree, limits
            client = self._connect()
            if self._pull is None and not self._image_present(client):
                self._pull = threading.Thread(
                    target=self._pull_image, args=(client,), name="docker-pull", daemon=True
                )
                self._pull.start()
            pull = self._pull
        if pull is not None:
            pull.join(max(timeout_s - (time.monotonic() - begin), 0.0))
            if pull.is_alive():
                raise SandboxNotReady(f"pulling image {self.image!r} (still going)")
            if self._pull_error is not None:
                error, self._pull_error, self._pull = self._pull_error, None, None
                raise SandboxError(f"image {self.image!r} is not available: {error}")
        with self._lock:
            self._ready = True
            self._prepare_s += time.monotonic() - begin
            self._prepare_unreported = True

    def _connect(self) -> Any:
        if self._client is None:
            import docker

            refusal = unix_socket_refusal(self._base_url)
            if refusal is not None:
                raise SandboxError(f"the Docker engine is not reachable: {refusal}")
            client = None
            try:
                if self._base_url:
                    client = docker.DockerClient(base_url=self._base_url, timeout=30)
                else:
                    client = docker.from_env(timeout=30)
                client.ping()
            except docker.errors.DockerException as exc:
                if client is not None:
                    client.close()
                raise SandboxError(f"the Docker engine is not reachable: {exc}") from exc
            self._client = client
        return self._client

    def _image_present(self, client: Any) -> bool:
        import docker

        try:
            client.images.get(self.image)
        except docker.errors.ImageNotFound:
            return False
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not inspect image {self.image!r}: {exc}") from exc
        return True

    def _pull_image(self, client: Any) -> None:
        import docker

        repository, _, tag = self.image.rpartition(":")
        if not repository or "/" in tag:
            repository, tag = self.image, "latest"
        try:
            client.images.pull(repository, tag=tag)
        except docker.errors.DockerException as exc:
            self._pull_error = str(exc)

    def kill(self) -> None:
        """Kill the current run's container (every process in it)."""
        with self._lock:
            if not self._running:
                return
            self._killed = True
            current = self._current
        if current is not None:  # else the run stops before starting its container
            self._kill_container(current)

    def _kill_container(self, container: str) -> None:
        import docker

        try:
            self._client.api.kill(container)
        except docker.errors.DockerException:
            return  # already gone: it exited or was removed meanwhile

    def close(self) -> None:
        """Kill any run and release the engine connection."""
        self.kill()
        with self._run_lock, self._lock:
            if self._client is not None:
                self._client.close()
            self._client = None
            self._tree = self._limits = None
            self._ready = False

    # -- running ----------------------------------------------------------
    def run(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float
    ) -> ExecResult:
        """Run ``argv`` literally in a new container, in ``cwd`` relative to the tree."""
        if not self._ready or self._tree is None or self._limits is None:
            raise SandboxError("run() called before prepare()")
        if not argv:
            raise SandboxError("empty command")
        workdir = sandbox_cwd(cwd)
        environment = base_environment(env)
        tree = self._tree
        with self._run_lock:
            prepare_s = self._prepare_s if self._prepare_unreported else 0.0
            self._prepare_unreported = False
            try:
                return self._run_locked(list(argv), workdir, environment, timeout_s, prepare_s)
            finally:
                # the container is removed by now, so nothing inside can race this
                scrub_tree(tree)

    def _host_config(self, limits: ResourceLimits, tree: Path) -> Any:
        from docker.types import LogConfig, Ulimit

        tmpfs_opts = f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=1777"
        return self._client.api.create_host_config(
            binds={str(tree): {"bind": MOUNT_POINT, "mode": "rw"}},
            network_mode="bridge" if limits.network else "none",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            pids_limit=limits.max_processes,
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            tmpfs={SANDBOX_TMP: tmpfs_opts, SANDBOX_HOME: tmpfs_opts},
            ulimits=[
                Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s),
                Ulimit(name="fsize", soft=limits.max_file_bytes, hard=limits.max_file_bytes),
                Ulimit(name="nofile", soft=limits.max_open_files, hard=limits.max_open_files),
                Ulimit(name="core", soft=0, hard=0),
            ],
            log_config=LogConfig(type="none"),
            ipc_mode="private",
            # A real init as pid 1: the command then gets default signal handling
            # (pid 1 ignores unhandled signals) and orphans are reaped.
            init=True,
        )

    def _run_locked(
        self,
        argv: list[str],
        workdir: str,
        environment: dict[str, str],
        timeout_s: float,
        prepare_s: float,
    ) -> ExecResult:
        import docker
        import requests

        assert self._tree is not None and self._limits is not None
        limits = self._limits
        api = self._client.api
        out = StreamCapture(limits.output_bytes)
        err = StreamCapture(limits.output_bytes)
        with self._lock:
            self._running, self._killed = True, False
        try:
            container = api.create_container(
                self.image,
                command=argv,
                user=self.user,
                working_dir=workdir,
                environment=environment,
                host_config=self._host_config(limits, self._tree),
                labels={LABEL: "1", f"{LABEL}.run": uuid.uuid4().hex[:8]},
                hostname="sandbox",
                stdin_open=False,
                tty=False,
            )["Id"]
        except docker.errors.DockerException as exc:
            with self._lock:
                self._running = False
            raise SandboxError(f"could not create the container: {exc}") from exc
        timed_out = False
        sock: Any = None
        try:
            try:
                sock = api.attach_socket(container, params={"stdout": 1, "stderr": 1, "stream": 1})
            except docker.errors.DockerException as exc:
                raise SandboxError(f"could not attach to the container: {exc}") from exc
            reader = threading.Thread(
                target=_pump, args=(sock, out, err), name="docker-output", daemon=True
            )
            reader.start()
            with self._lock:
                self._current = container
                killed_early = self._killed  # kill() came while it was being created
            # The run's clock starts with the container: creating it is setup.
            started_at = time.time()
            begin = time.monotonic()
            if killed_early:
                code = 128 + 9  # never started: reported like a command killed by SIGKILL
            else:
                try:
                    api.start(container)
                except docker.errors.DockerException as exc:
                    raise SandboxError(f"could not start the container: {exc}") from exc
                with self._lock:
                    killed_while_starting = self._killed
                if killed_while_starting:  # its kill found nothing running yet
                    self._kill_container(container)
                try:
                    status = api.wait(container, timeout=max(timeout_s, 0.001))
                except (requests.exceptions.RequestException, docker.errors.DockerException):
                    timed_out = True
                    self._kill_container(container)
                    status = api.wait(container, timeout=_REMOVE_TIMEOUT_S)
                reader.join(_DRAIN_WAIT_S)
                code = int(status.get("StatusCode", -1))
        finally:
            with self._lock:
                self._current = None
                self._running = False
                killed = self._killed
            # On failure the container stays labelled, so `docker ps -f label=...` finds it.
            with contextlib.suppress(docker.errors.DockerException):
                api.remove_container(container, force=True)
            if sock is not None:
                _close_attached(sock)
        return _result(code, out, err, timed_out, killed, started_at, begin, prepare_s)


def _close_attached(sock: Any) -> None:
    """Close the stream ``attach_socket`` returned and the HTTP connection under it.

    The SDK hands back the response's raw ``SocketIO``; closing it leaves the
    connection's own socket open (a ``SocketIO`` only drops its reference), so the
    response the SDK keeps on it (``_response``) is closed too, which closes the
    connection and its socket. The response goes first: its buffered reader wraps the
    ``SocketIO`` and cannot be flushed once that is closed.
    """
    response = getattr(sock, "_response", None)
    if response is not None:
        response.close()
    sock.close()


def _pump(sock: Any, out: StreamCapture, err: StreamCapture) -> None:
    """Demultiplex the attach stream into the two captures until it ends."""
    from docker.utils.socket import frames_iter

    try:
        for stream, data in frames_iter(sock, tty=False):  # type: ignore[no-untyped-call]
            (err if stream == 2 else out).feed(data)
    except (OSError, ValueError):  # ValueError: a read of the closed SocketIO
        return  # the socket was closed under us after the container ended


def _result(
    code: int,
    out: StreamCapture,
    err: StreamCapture,
    timed_out: bool,
    killed: bool,
    started_at: float,
    begin: float,
    prepare_s: float,
) -> ExecResult:
    sig = code - 128 if 128 < code < 128 + 65 else None
    return ExecResult(
        exit_code=TIMEOUT_EXIT_CODE if timed_out else code,
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        timed_out=timed_out,
        killed=killed or timed_out,
        signal=sig,
        started_at=started_at,
        duration_s=time.monotonic() - begin,
        prepare_s=prepare_s,
    )
