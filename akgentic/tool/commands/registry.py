"""``CommandRegistry``: the named commands of one agent, callable from code or from text."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from akgentic.core.actor_address import ActorAddress
from akgentic.tool.commands.grammar import CommandUsageError, bind_line, split_command_line
from akgentic.tool.commands.models import CommandDescriptor
from akgentic.tool.commands.signature import CommandSignature
from akgentic.tool.errors import CommandNotRecognized, RetriableError

__all__ = ["CommandRegistry", "CommandSource"]

logger = logging.getLogger(__name__)

CommandSource: TypeAlias = tuple[Callable[..., Any], str]
"""A command callable paired with the label of its owner (usually a tool card's name)."""


@dataclass(frozen=True, slots=True)
class _Command:
    name: str
    func: Callable[..., Any]
    owner: str
    signature: CommandSignature

    def descriptor(self) -> CommandDescriptor:
        return CommandDescriptor(
            name=self.name,
            description=self.signature.description,
            args=[param.arg.model_copy() for param in self.signature.params],
            tool_card=self.owner,
        )


def _derive_name(func: Callable[..., Any], owner: str) -> str:
    name = getattr(func, "__name__", None)
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"Cannot register a command from {owner}: {func!r} has no __name__ "
            "(wrap it in a named function)"
        )
    return name


def _failure(name: str, reason: str) -> str:
    return f"Command '{name}' failed: {reason}"


def _describe(error: Exception) -> str:
    # A RetriableError is written for the reader already; anything else is unexpected,
    # so its type is kept to make the report useful.
    if isinstance(error, RetriableError):
        return str(error) or type(error).__name__
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class CommandRegistry:
    """The commands one agent offers, reachable by name from code or from ``/`` text.

    Build it from ``(callable, owner)`` pairs, keyed by each callable's ``__name__``,
    or from a mapping ``{name: (callable, owner)}`` when names are chosen explicitly.
    Every callable's signature is checked and analysed here, once: ``*args``,
    ``**kwargs``, unannotated parameters and pydantic-model parameters are refused,
    and so is a name offered twice (the error names both owners).

    The registry holds the callables it was given and nothing else; bound methods of
    tool cards are fine because cards reference their agent only weakly.

    Example:
        >>> def greet(name: str, times: int = 1) -> str:
        ...     '''Say hello.'''
        ...     return " ".join([f"hello {name}"] * times)
        >>> registry = CommandRegistry([(greet, "Demo")])
        >>> registry.dispatch("/greet Ada times=2")
        'hello Ada hello Ada'
    """

    def __init__(
        self, commands: Mapping[str, CommandSource] | Iterable[CommandSource] = ()
    ) -> None:
        """Register ``commands``; raise ValueError on a bad signature or a name clash."""
        self._commands: dict[str, _Command] = {}
        if isinstance(commands, Mapping):
            for name, (func, owner) in commands.items():
                self._register(name, func, owner)
        else:
            for func, owner in commands:
                self._register(_derive_name(func, owner), func, owner)

    def _register(self, name: str, func: Callable[..., Any], owner: str) -> None:
        if not callable(func):
            raise TypeError(f"Command '{name}' from {owner} is not callable: {func!r}")
        if not name or name.startswith("/") or any(char.isspace() for char in name):
            raise ValueError(
                f"Invalid command name {name!r} from {owner}: it must be one word "
                "without a leading '/'"
            )
        existing = self._commands.get(name)
        if existing is not None:
            raise ValueError(
                f"Command '{name}' is provided by both {existing.owner} and {owner}; "
                "rename one of them or disable it on one card"
            )
        signature = CommandSignature.from_callable(name, func, owner)
        self._commands[name] = _Command(name=name, func=func, owner=owner, signature=signature)

    def __len__(self) -> int:
        """Number of registered commands."""
        return len(self._commands)

    def names(self) -> list[str]:
        """Registered command names, in registration order."""
        return list(self._commands)

    def has(self, name: str) -> bool:
        """True when a command called ``name`` (an optional leading ``/`` is ignored) exists."""
        return name.removeprefix("/") in self._commands

    def callable(self, name: str) -> Callable[..., Any]:
        """Return the registered function itself, so callers get its native return value.

        Raises:
            CommandNotRecognized: No command has that name.
        """
        key = name.removeprefix("/")
        try:
            return self._commands[key].func
        except KeyError:
            raise CommandNotRecognized(key) from None

    def descriptors(self) -> list[CommandDescriptor]:
        """Discovery records for every command, in registration order (fresh copies)."""
        return [command.descriptor() for command in self._commands.values()]

    def dispatch(self, text: str) -> str | None:
        """Run a ``/name args...`` line and return the command's result as text.

        Returns ``None`` when the command returned ``None``, ``str(result)`` otherwise.
        Once the command is identified nothing is raised: a line that does not fit its
        signature, or a command body that raises, yields
        ``"Command '<name>' failed: <reason>"``.

        Raises:
            CommandNotRecognized: The first word is not a registered command; nothing
                was run, so the caller may treat the text as an ordinary message.
        """
        name, tail = split_command_line(text)
        command = self._commands.get(name)
        if command is None:
            raise CommandNotRecognized(name)
        try:
            args, kwargs = bind_line(command.signature, tail)
        except CommandUsageError as error:
            return _failure(name, str(error))
        try:
            result = command.func(*args, **kwargs)
            return None if result is None else render_result(result)
        except Exception as error:  # a command must never take its agent down
            logger.debug("command %r raised", name, exc_info=True)
            return _failure(name, _describe(error))


def render_result(result: object) -> str:
    """A command's result as a person reads it: a member by name and role, else ``str``.

    ``/hire_member`` returns the hired member's address (the agent API needs it);
    its repr would reach the human as ``<ActorAddress ...>``.
    """
    if isinstance(result, ActorAddress):
        return f"{result.name} ({result.role})"
    return str(result)
