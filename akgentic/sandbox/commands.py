"""Turning a command string into an argv, with no shell, and the allowed programs.

The allow-list is a convenience that keeps agents on a known tool set and gives them
a clear message; it is **not** the security boundary. Anything allowed can run
arbitrary code (``python3 -c``, ``bash -c``, ``make``), so the sandbox backend is what
contains a command, never this list.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from akgentic.sandbox.errors import CommandNotAllowedError, CommandParseError

__all__ = ["ALLOWED_COMMANDS", "parse_command", "validate_command"]

#: Programs an agent may start by default (the first word of its command).
ALLOWED_COMMANDS: frozenset[str] = frozenset(
    {
        "python", "python3", "pytest", "ruff", "mypy", "uv", "pip",
        "node", "npm", "npx",
        "sh", "bash",
        "cat", "echo", "ls", "cp", "mv", "rm", "rmdir", "mkdir", "find", "grep",
        "sed", "awk", "jq", "wc", "xargs", "touch",
        "make", "git", "kill", "curl", "wget",
    }
)  # fmt: skip


def parse_command(command: str) -> list[str]:
    """Split ``command`` into words the way a POSIX shell quotes them, without a shell.

    Shell syntax (pipes, ``&&``, redirections, ``$VAR``) is not interpreted: it comes
    back as literal words. Raises :class:`CommandParseError` on unbalanced quotes or a
    trailing backslash.
    """
    if "\x00" in command:
        raise CommandParseError("Command could not be parsed (it contains a NUL byte)")
    try:
        return shlex.split(command, posix=True)
    except ValueError as exc:
        raise CommandParseError(
            f"Command could not be parsed ({exc}). Balance the quotes, or wrap shell "
            "syntax in bash -c '...'"
        ) from None


def validate_command(
    command: str | Iterable[str], allowed: Iterable[str] | None = None
) -> list[str]:
    """The argv of ``command`` when its program is allowed.

    ``command`` is a string (split by :func:`parse_command`) or an argv already.
    ``allowed`` defaults to :data:`ALLOWED_COMMANDS`; the program (first word) must be
    one of its names exactly, so ``/usr/bin/python3`` is not ``python3``. Raises
    :class:`CommandNotAllowedError` for an empty or unlisted command.
    """
    argv = parse_command(command) if isinstance(command, str) else list(command)
    if not argv or not argv[0].strip():
        raise CommandNotAllowedError("Command string is empty")
    if any("\x00" in word for word in argv):
        raise CommandParseError("Command could not be parsed (it contains a NUL byte)")
    names = ALLOWED_COMMANDS if allowed is None else frozenset(allowed)
    program = argv[0]
    if program not in names:
        listed = ", ".join(sorted(names))
        raise CommandNotAllowedError(
            f"Command {program!r} is not in the allowed commands list. Allowed: [{listed}]",
            program,
        )
    return argv
