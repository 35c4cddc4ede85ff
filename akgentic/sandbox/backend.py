"""The contract every sandbox backend implements, and helpers they share."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from akgentic.sandbox.errors import SandboxError
from akgentic.sandbox.models import ExecResult, ResourceLimits

__all__ = [
    "MOUNT_POINT",
    "SandboxBackend",
    "base_environment",
    "sandbox_cwd",
]

#: Where the tree appears inside every sandbox.
MOUNT_POINT = "/workspace"
#: The private, writable home and temporary directories inside every sandbox.
SANDBOX_HOME = "/home/sandbox"
SANDBOX_TMP = "/tmp"


@runtime_checkable
class SandboxBackend(Protocol):
    """Runs commands isolated from the host, with one directory tree writable.

    One instance serves one tree. ``prepare`` is idempotent and binds the instance to
    ``tree`` (raising :class:`~akgentic.sandbox.SandboxNotReady` past ``timeout_s``,
    :class:`~akgentic.sandbox.SandboxError` otherwise). ``run`` executes ``argv``
    literally (no shell), one run at a time, in ``cwd`` relative to the tree; it
    never raises for what the command did and, past ``timeout_s``, kills every process
    of the run and returns exit code 124 with the output so far. ``kill`` ends the
    current run's whole process tree from any thread (a no-op when idle); ``close``
    kills, then releases what ``prepare`` made.
    """

    name: str

    def prepare(self, tree: Path, *, limits: ResourceLimits, timeout_s: float) -> None:
        """Make the backend ready to run commands in ``tree`` under ``limits``."""
        ...

    def run(
        self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float
    ) -> ExecResult:
        """Run one command to completion or to its time budget."""
        ...

    def kill(self) -> None:
        """End the current run, every process of it."""
        ...

    def close(self) -> None:
        """Kill, then release everything ``prepare`` made."""
        ...


def sandbox_cwd(cwd: str) -> str:
    """The absolute in-sandbox directory for ``cwd``, given relative to the tree.

    A leading ``/workspace/`` is accepted (it is what commands print); any other
    absolute path, ``..`` escape or NUL byte raises :class:`SandboxError`.
    """
    if "\x00" in cwd:
        raise SandboxError("working directory contains a NUL byte")
    if cwd == MOUNT_POINT or cwd.startswith(MOUNT_POINT + "/"):
        cwd = cwd[len(MOUNT_POINT) :].lstrip("/")
    if cwd.startswith("/"):
        raise SandboxError(f"working directory {cwd!r} must be relative to the tree")
    normal = posixpath.normpath(cwd or ".")
    if normal == ".." or normal.startswith("../"):
        raise SandboxError(f"working directory {cwd!r} leaves the tree")
    return MOUNT_POINT if normal == "." else f"{MOUNT_POINT}/{normal}"


def base_environment(
    extra: Mapping[str, str] | None = None, *, run_id: str | None = None
) -> dict[str, str]:
    """The environment a sandboxed command starts with, built from nothing.

    No host variable is inherited (so no API key leaks in). Git gets command-scope
    configuration so it works on a tree owned by another uid and can commit. ``extra``
    (the card's own variables, then the caller's) comes last and wins.
    """
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": SANDBOX_HOME,
        "TMPDIR": SANDBOX_TMP,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
        "GIT_CONFIG_KEY_1": "user.name",
        "GIT_CONFIG_VALUE_1": "akgentic-sandbox",
        "GIT_CONFIG_KEY_2": "user.email",
        "GIT_CONFIG_VALUE_2": "sandbox@akgentic",
    }
    if run_id is not None:
        env["AKGENTIC_RUN_ID"] = run_id
    for key, value in (extra or {}).items():
        if not key or "=" in key or "\x00" in key or "\x00" in value:
            raise SandboxError(f"invalid environment variable {key!r}")
        env[key] = value
    return env
