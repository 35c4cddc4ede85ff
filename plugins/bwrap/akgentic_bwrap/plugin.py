"""Registers the ``bwrap`` sandbox backend (entry point ``bwrap``, group ``akgentic``)."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import SandboxBackendSpec, hookimpl

__all__ = ["akgentic_sandbox_backends"]


def _make_backend() -> object:
    from akgentic_bwrap.backend import BwrapBackend

    return BwrapBackend()


def _available() -> str | None:
    from akgentic_bwrap.availability import bwrap_unavailable_reason

    return bwrap_unavailable_reason()


@hookimpl
def akgentic_sandbox_backends() -> Iterable[SandboxBackendSpec]:
    """The bubblewrap backend, usable where ``bwrap`` runs with user namespaces."""
    from akgentic_bwrap.availability import INSTALL_HINT

    return [
        SandboxBackendSpec(
            name="bwrap",
            description="Bubblewrap: rootless namespaces, millisecond start.",
            factory=_make_backend,
            available=_available,
            install_hint=INSTALL_HINT,
            isolation="namespaces (user, pid, mount, net, ipc, uts), no capabilities, rlimits",
        )
    ]
