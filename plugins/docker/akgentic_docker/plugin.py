"""Registers the ``docker`` sandbox backend (entry point ``docker``, group ``akgentic``)."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import SandboxBackendSpec, hookimpl

__all__ = ["akgentic_sandbox_backends"]


def _make_backend() -> object:
    from akgentic_docker.backend import DockerBackend

    return DockerBackend()


def _available() -> str | None:
    from akgentic_docker.availability import docker_unavailable_reason

    return docker_unavailable_reason()


@hookimpl
def akgentic_sandbox_backends() -> Iterable[SandboxBackendSpec]:
    """The Docker backend, usable where an engine answers."""
    from akgentic_docker.availability import INSTALL_HINT

    return [
        SandboxBackendSpec(
            name="docker",
            description="Docker: one container per command, no network, read-only root.",
            factory=_make_backend,
            available=_available,
            install_hint=INSTALL_HINT,
            isolation="container per run (namespaces, cgroups), no capabilities, read-only root",
        )
    ]
