"""Whether a Docker engine can run sandboxed commands here, and why not."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

__all__ = ["INSTALL_HINT", "docker_unavailable_reason", "unix_socket_refusal"]

_DEFAULT_SOCKET = "/var/run/docker.sock"
_UNIX_SCHEMES = ("unix://", "http+unix://")

INSTALL_HINT = (
    "apt install docker.io and start the engine (or point DOCKER_HOST at one); "
    "the Python SDK comes with: pip install akgentic-docker"
)


def docker_unavailable_reason() -> str | None:
    """``None`` when an engine answers within 5 s, else the reason (never raises)."""
    try:
        import docker
    except ImportError:
        return "the docker Python SDK is not installed (pip install akgentic-docker)"
    refusal = unix_socket_refusal()
    if refusal is not None:
        return f"no Docker engine is reachable: {refusal}"
    try:
        client = docker.from_env(timeout=5)
    except docker.errors.DockerException as exc:
        return f"no Docker engine is reachable: {exc}"
    try:
        client.ping()
    except Exception as exc:  # the SDK raises requests' errors as well as its own
        return f"the Docker engine did not answer: {type(exc).__name__}: {exc}"
    finally:
        client.close()
    return None


def unix_socket_refusal(
    base_url: str | None = None, environ: Mapping[str, str] | None = None, timeout_s: float = 5.0
) -> str | None:
    """Why the engine's Unix socket refuses a connection; None when it accepts one.

    The engine is ``base_url``, else ``$DOCKER_HOST``, else the local socket; an engine
    that is not on a Unix socket gives None (nothing to check here). The docker SDK
    leaves the socket of a connection that fails unclosed (its ``UnixHTTPConnection``
    opens it, the ``connect`` raises, nobody closes it), so a missing or dead engine
    socket is found here first, with a socket that is closed whatever happens.
    """
    env = os.environ if environ is None else environ
    host = base_url or env.get("DOCKER_HOST", "").strip() or f"unix://{_DEFAULT_SOCKET}"
    scheme = next((s for s in _UNIX_SCHEMES if host.startswith(s)), None)
    if scheme is None:
        return None
    path = host[len(scheme) :] or _DEFAULT_SOCKET
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(timeout_s)
        try:
            probe.connect(path)
        except OSError as exc:
            return f"cannot connect to {path}: {exc.strerror or exc}"
    return None
