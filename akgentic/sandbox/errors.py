"""Errors of the sandbox layer.

A command that runs and fails is never an error here: its exit code and output are
the outcome (:class:`~akgentic.sandbox.ExecResult`). These errors mean a command was
refused before it ran, or a backend could not be used at all.
"""

from __future__ import annotations

__all__ = [
    "CommandNotAllowedError",
    "CommandParseError",
    "SandboxError",
    "SandboxNotReady",
    "SandboxUnavailableError",
]


class SandboxError(Exception):
    """A backend could not prepare or could not run a command (nothing ran)."""


class SandboxNotReady(SandboxError):  # noqa: N818 - the contract's public name
    """``prepare()`` did not finish within its budget; it may go on in the background.

    ``reason`` says what the backend was doing (pulling an image, starting an engine).
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class SandboxUnavailableError(SandboxError, LookupError):
    """No sandbox backend can be used: unknown name, or not runnable on this host.

    Raised when a backend is resolved (at team creation for a workspace with exec);
    the message lists the installed backends, why each cannot run and what to install.
    Nothing ever falls back to running commands unsandboxed.
    """


class CommandParseError(ValueError):
    """A command string could not be split into words (unbalanced quotes...)."""


class CommandNotAllowedError(ValueError):
    """A command is empty, or its program is not in the allowed list."""

    def __init__(self, message: str, program: str = "") -> None:
        self.program = program
        super().__init__(message)
