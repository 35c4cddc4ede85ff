"""The sandbox contract: running untrusted commands isolated from the host.

The kernel defines what a backend must do (:class:`SandboxBackend`), what a run
reports (:class:`ExecResult`) and the limits it runs under (:class:`ResourceLimits`);
plugins provide the backends (``akgentic-bwrap``, ``akgentic-docker``) through the
``akgentic_sandbox_backends`` hook, and :func:`resolve_sandbox_backend` picks one.
After every run a backend calls :func:`scrub_tree`, so no setuid/setgid bit and no
device node made inside stays on the host. The command allow-list
(:data:`ALLOWED_COMMANDS`, :func:`validate_command`) is a convenience for agents, not
the boundary: the backend is. See ``docs/sandbox.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.plugins.specs import SandboxBackendSpec
    from akgentic.sandbox.backend import (
        MOUNT_POINT,
        SandboxBackend,
        base_environment,
        sandbox_cwd,
    )
    from akgentic.sandbox.capture import StreamCapture
    from akgentic.sandbox.commands import ALLOWED_COMMANDS, parse_command, validate_command
    from akgentic.sandbox.errors import (
        CommandNotAllowedError,
        CommandParseError,
        SandboxError,
        SandboxNotReady,
        SandboxUnavailableError,
    )
    from akgentic.sandbox.models import TIMEOUT_EXIT_CODE, ExecResult, ResourceLimits
    from akgentic.sandbox.scrub import ScrubReport, scrub_tree
    from akgentic.sandbox.selection import (
        ENV_BACKEND,
        BackendStatus,
        backend_statuses,
        resolve_sandbox_backend,
    )

__all__ = [
    "ALLOWED_COMMANDS",
    "ENV_BACKEND",
    "MOUNT_POINT",
    "TIMEOUT_EXIT_CODE",
    "BackendStatus",
    "CommandNotAllowedError",
    "CommandParseError",
    "ExecResult",
    "ResourceLimits",
    "SandboxBackend",
    "SandboxBackendSpec",
    "SandboxError",
    "SandboxNotReady",
    "SandboxUnavailableError",
    "ScrubReport",
    "StreamCapture",
    "backend_statuses",
    "base_environment",
    "parse_command",
    "resolve_sandbox_backend",
    "sandbox_cwd",
    "scrub_tree",
    "validate_command",
]

_LAZY = {
    "SandboxBackendSpec": "akgentic.plugins.specs",
    "MOUNT_POINT": "akgentic.sandbox.backend",
    "SandboxBackend": "akgentic.sandbox.backend",
    "base_environment": "akgentic.sandbox.backend",
    "sandbox_cwd": "akgentic.sandbox.backend",
    "StreamCapture": "akgentic.sandbox.capture",
    "ALLOWED_COMMANDS": "akgentic.sandbox.commands",
    "parse_command": "akgentic.sandbox.commands",
    "validate_command": "akgentic.sandbox.commands",
    "CommandNotAllowedError": "akgentic.sandbox.errors",
    "CommandParseError": "akgentic.sandbox.errors",
    "SandboxError": "akgentic.sandbox.errors",
    "SandboxNotReady": "akgentic.sandbox.errors",
    "SandboxUnavailableError": "akgentic.sandbox.errors",
    "TIMEOUT_EXIT_CODE": "akgentic.sandbox.models",
    "ExecResult": "akgentic.sandbox.models",
    "ResourceLimits": "akgentic.sandbox.models",
    "ScrubReport": "akgentic.sandbox.scrub",
    "scrub_tree": "akgentic.sandbox.scrub",
    "ENV_BACKEND": "akgentic.sandbox.selection",
    "BackendStatus": "akgentic.sandbox.selection",
    "backend_statuses": "akgentic.sandbox.selection",
    "resolve_sandbox_backend": "akgentic.sandbox.selection",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
