"""Whether a Docker engine can run sandboxed commands here, and why not."""

from __future__ import annotations

__all__ = ["INSTALL_HINT", "docker_unavailable_reason"]

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
