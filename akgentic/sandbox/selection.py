"""Choosing the sandbox backend a workspace runs its commands on.

Order: the name the card gives, else ``AKGENTIC_SANDBOX_BACKEND``, else the first of
``bwrap``, ``docker`` that can run on this host. A name that is unknown or cannot run
here is an error listing every installed backend, why it cannot run and what to
install. There is no fallback to running unsandboxed: without a usable backend,
nothing runs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from akgentic.plugins.known import KNOWN_PROVIDERS
from akgentic.plugins.specs import SandboxBackendSpec
from akgentic.sandbox.errors import SandboxUnavailableError

__all__ = [
    "AUTO_ORDER",
    "ENV_BACKEND",
    "BackendStatus",
    "backend_statuses",
    "resolve_sandbox_backend",
]

log = logging.getLogger(__name__)

#: Environment variable naming the backend when the card does not.
ENV_BACKEND = "AKGENTIC_SANDBOX_BACKEND"
#: Backends tried, in order, when nothing names one. Others are used only by name.
AUTO_ORDER: tuple[str, ...] = ("bwrap", "docker")

_SYSTEM_HINTS = {
    "bwrap": "apt install bubblewrap (and allow unprivileged user namespaces)",
    "docker": "apt install docker.io and start the engine (or set DOCKER_HOST)",
}


@dataclass(frozen=True)
class BackendStatus:
    """One backend's state on this host: ``reason`` is None when it can run."""

    name: str
    installed: bool
    reason: str | None
    install_hint: str
    isolation: str = ""

    @property
    def usable(self) -> bool:
        """True when the backend is installed and can run here."""
        return self.installed and self.reason is None


def _check(spec: SandboxBackendSpec) -> str | None:
    if spec.available is None:
        return None
    try:
        verdict = spec.available()
    except Exception as exc:  # available() must not raise; a broken probe means unusable
        return f"its availability check failed: {type(exc).__name__}: {exc}"
    if verdict is None or verdict is True:
        return None
    if verdict is False:
        return "it reports it cannot run on this host"
    return str(verdict)


def _hint(name: str, spec: SandboxBackendSpec | None) -> str:
    if spec is not None:
        return spec.install_hint or _SYSTEM_HINTS.get(name, "")
    distribution = KNOWN_PROVIDERS["sandbox_backends"].get(name)
    parts = [f"pip install {distribution}"] if distribution else []
    if name in _SYSTEM_HINTS:
        parts.append(_SYSTEM_HINTS[name])
    return "; ".join(parts)


def backend_statuses(
    specs: Mapping[str, SandboxBackendSpec] | None = None,
) -> list[BackendStatus]:
    """Every known or installed backend with whether it can run here and why not."""
    if specs is None:
        from akgentic.plugins import get_host

        specs = get_host().registry.sandbox_backends()
    names = list(AUTO_ORDER) + sorted(n for n in specs if n not in AUTO_ORDER)
    statuses = []
    for name in names:
        spec = specs.get(name)
        if spec is None:
            statuses.append(BackendStatus(name, False, "not installed", _hint(name, None)))
        else:
            statuses.append(
                BackendStatus(name, True, _check(spec), _hint(name, spec), spec.isolation)
            )
    return statuses


def _failure(headline: str, statuses: list[BackendStatus]) -> SandboxUnavailableError:
    lines = [headline, "Sandbox backends on this host:"]
    for status in statuses:
        state = "ready" if status.usable else f"unavailable: {status.reason}"
        hint = f" (to use it: {status.install_hint})" if not status.usable else ""
        lines.append(f"  - {status.name}: {state}{hint}")
    lines.append("Commands are never run unsandboxed; install or fix one of the backends above.")
    return SandboxUnavailableError("\n".join(lines))


def resolve_sandbox_backend(
    name: str | None = None,
    *,
    specs: Mapping[str, SandboxBackendSpec] | None = None,
    environ: Mapping[str, str] | None = None,
) -> SandboxBackendSpec:
    """The backend record to run commands on, checked usable on this host.

    Args:
        name: The backend the card names (``WorkspaceExec.backend``), if any.
        specs: The registered backends; default: the process plugin registry.
        environ: Where ``AKGENTIC_SANDBOX_BACKEND`` is read; default ``os.environ``.

    Raises:
        SandboxUnavailableError: the named backend is unknown or cannot run here, or
            no backend can run here at all. The message says what to install.
    """
    if specs is None:
        from akgentic.plugins import get_host

        specs = get_host().registry.sandbox_backends()
    env = os.environ if environ is None else environ
    requested = (name or "").strip() or env.get(ENV_BACKEND, "").strip()
    statuses = backend_statuses(specs)
    if requested:
        origin = "the card" if (name or "").strip() else ENV_BACKEND
        spec = specs.get(requested)
        if spec is None:
            raise _failure(
                f"sandbox backend {requested!r} (named by {origin}) is not installed.", statuses
            )
        reason = _check(spec)
        if reason is not None:
            raise _failure(
                f"sandbox backend {requested!r} (named by {origin}) cannot run here: {reason}.",
                statuses,
            )
        log.info("sandbox backend %r chosen (named by %s)", requested, origin)
        return spec
    for status in statuses:
        if status.name in AUTO_ORDER and status.usable:
            log.info("sandbox backend %r chosen (first available)", status.name)
            return specs[status.name]
    raise _failure("no sandbox backend can run on this host.", statuses)
