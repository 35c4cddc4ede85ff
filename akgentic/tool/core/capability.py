"""``Capability``: one capability of a card, declared once, served to the model and to people.

A card capability often has two surfaces: a tool the model calls (``TOOL_CALL``) and a
slash command a person types (``COMMAND``). Written by hand, each hook repeats the
gate, the name and the instructions of every capability. A :class:`CapabilityCard`
instead lists :class:`Capability` records, one per capability, and its ``get_tools``
and ``get_commands`` adapt each record to the surfaces its param exposes.
"""

from __future__ import annotations

import enum
import functools
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam, resolve_param

__all__ = [
    "SAME_AS_TOOL",
    "Builder",
    "Capability",
    "CapabilityCard",
    "SameAsTool",
    "serve_commands",
    "serve_tools",
]


class SameAsTool(enum.Enum):
    """Type of :data:`SAME_AS_TOOL`."""

    SAME_AS_TOOL = "same_as_tool"


SAME_AS_TOOL: Final = SameAsTool.SAME_AS_TOOL
"""``Capability(command=SAME_AS_TOOL)``: the command is the tool's function, built again."""


Builder: TypeAlias = Callable[[Any], Callable[..., Any]]
"""Builds one surface's function from the resolved param (an instance of the field's class)."""


@dataclass(frozen=True)
class Capability:
    """One capability of a card, declared once and adapted to the tool and command surfaces.

    A capability is a card field typed ``SomeParam | bool`` (see
    :func:`~akgentic.tool.core.catalog.card_capabilities`); the record names that field
    and says how each surface is built. The param class comes from the field's
    annotation, the name from the field unless ``name`` is given. Each surface is
    gated by the resolved param exactly like a hand-written hook:
    ``resolve_param(card.<field>, SomeParam, TOOL_CALL)`` for the tool,
    ``... COMMAND`` for the command.

    What stays per surface is what really differs between them:

    - **Signature and description.** The tool's docstring and parameters are written
      for the model (the ``Args:`` section feeds the tool schema); a command's are
      parsed from a line a person types (``RestOfLine``, fewer arguments, a one-line
      summary). When both are the same function, pass ``command=SAME_AS_TOOL``;
      otherwise give each surface its own builder.
    - **Errors and output.** A tool may return structured values and raise
      ``RetriableError`` for the model to retry; a command may render text and answer
      failures as text. Each builder does what its audience needs; a rule that holds
      for every tool of a card (an error mapping) belongs in the card's ``get_tools``
      override around ``super().get_tools()``.
    - **Instructions.** The param's ``instructions`` are guidance for the model: they
      are added to the tool's docstring, and to the command only when it is the tool's
      function (``SAME_AS_TOOL``) or ``command_instructions`` is set.

    Both functions are named ``name`` by the adapter (a builder may return a function
    under any Python name), so the tool and the command cannot drift apart. Builders
    are called each time a surface is served and must return a fresh function (a
    closure, or a ``functools.wraps`` wrapper), never a bound method: the adapter sets
    its name and docstring.

    Attributes:
        field: The card field configuring the capability (``SomeParam | bool``).
        tool: Builds the model's function from the resolved param; None when the
            capability is never a tool.
        command: Builds the person's function from the resolved param;
            ``SAME_AS_TOOL`` to serve the tool's function; None when the capability is
            never a command.
        name: The tool's name and the command's name (default: ``field``).
        command_key: The command's key in ``get_commands`` (default: the field's param
            class); a field serving two commands keys the second by a subclass.
        command_instructions: Add the param's instructions to a command built by its
            own builder too.

    Example::

        Capability("tally", self._build_tally, SAME_AS_TOOL)
    """

    field: str
    tool: Builder | None = None
    command: Builder | Literal[SameAsTool.SAME_AS_TOOL] | None = None
    name: str = ""
    command_key: type[BaseToolParam] | None = None
    command_instructions: bool = False

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.field)
        if not self.name.isidentifier():
            raise ValueError(f"capability name {self.name!r} must be a Python identifier")
        if self.tool is None and self.command is None:
            raise ValueError(f"capability '{self.name}' has neither a tool nor a command")
        if self.command is SAME_AS_TOOL and self.tool is None:
            raise ValueError(f"capability '{self.name}' has command=SAME_AS_TOOL but no tool")
        if self.command_key is not None and not (
            isinstance(self.command_key, type) and issubclass(self.command_key, BaseToolParam)
        ):
            raise TypeError(f"capability '{self.name}': command_key must be a param class")

    def resolve(self, card: ToolCard, channel: Channels) -> BaseToolParam | None:
        """The param when ``card`` has the capability on ``channel``, else None.

        Raises:
            ValueError: ``field`` is not a ``SomeParam | bool`` field of the card.
        """
        param_class = _field_param(card, self.field)
        return resolve_param(getattr(card, self.field), param_class, channel)

    def build_tool(self, card: ToolCard) -> Callable[..., Any] | None:
        """The model's function, or None when ``card`` does not serve it."""
        if self.tool is None:
            return None
        param = self.resolve(card, TOOL_CALL)
        if param is None:
            return None
        return param.apply_instructions(self._named(self.tool(param)))

    def build_command(
        self, card: ToolCard
    ) -> tuple[type[BaseToolParam], Callable[..., Any]] | None:
        """The command's key and function, or None when ``card`` does not serve it."""
        if self.command is None:
            return None
        param = self.resolve(card, COMMAND)
        if param is None:
            return None
        key = self.command_key or _field_param(card, self.field)
        if self.command is SAME_AS_TOOL:
            assert self.tool is not None  # checked in __post_init__
            return key, param.apply_instructions(self._named(self.tool(param)))
        func = self._named(self.command(param))
        return key, param.apply_instructions(func) if self.command_instructions else func

    def _named(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if getattr(func, "__name__", None) == self.name:
            return func
        scope = str(getattr(func, "__qualname__", "")).rpartition(".")[0]
        try:
            func.__name__ = self.name
            func.__qualname__ = f"{scope}.{self.name}" if scope else self.name
        except (AttributeError, TypeError):
            raise TypeError(
                f"capability '{self.name}': a builder returned {func!r}, which cannot be "
                "renamed; return a fresh function (a closure or a functools.wraps wrapper)"
            ) from None
        return func


@functools.lru_cache(maxsize=512)
def _param_fields(card_class: type[ToolCard]) -> dict[str, type[BaseToolParam]]:
    from akgentic.tool.core.catalog import card_capabilities

    return {info.name: info.param for info in card_capabilities(card_class)}


def _field_param(card: ToolCard, field: str) -> type[BaseToolParam]:
    try:
        return _param_fields(type(card))[field]
    except KeyError:
        raise ValueError(
            f"{type(card).__name__} declares a capability on '{field}', which is not a "
            "field typed SomeParam | bool"
        ) from None


def serve_tools(card: ToolCard, capabilities: Sequence[Capability]) -> list[Callable[..., Any]]:
    """The tool surface of ``card``'s ``capabilities``, in their order.

    Raises:
        ValueError: Two served tools share a name, or a capability names no param field.
    """
    tools: list[Callable[..., Any]] = []
    seen: set[str] = set()
    for capability in capabilities:
        tool = capability.build_tool(card)
        if tool is None:
            continue
        if capability.name in seen:
            raise ValueError(f"{type(card).__name__} serves two tools named '{capability.name}'")
        seen.add(capability.name)
        tools.append(tool)
    return tools


def serve_commands(
    card: ToolCard, capabilities: Sequence[Capability]
) -> dict[type[BaseToolParam], Callable[..., Any]]:
    """The command surface of ``card``'s ``capabilities``, keyed by param class, in order.

    Raises:
        ValueError: Two served commands share a key or a name, or a capability names no
            param field.
    """
    owner = type(card).__name__
    commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
    seen: set[str] = set()
    for capability in capabilities:
        served = capability.build_command(card)
        if served is None:
            continue
        key, command = served
        if key in commands:
            raise ValueError(f"{owner} serves two commands keyed by {key.__name__}")
        if capability.name in seen:
            raise ValueError(f"{owner} serves two commands named '{capability.name}'")
        seen.add(capability.name)
        commands[key] = command
    return commands


class CapabilityCard(ToolCard):
    """A tool card whose tools and commands are declared once, as :class:`Capability` records.

    Implement :meth:`capabilities`; ``get_tools`` and ``get_commands`` serve every
    record on the surfaces its param exposes, in the order listed. A capability that
    depends on card settings beyond its param (a ``read_only`` card) is simply not
    listed. Override a hook around ``super()`` to add what the records do not cover
    (for example one error mapping applied to every tool). The other hooks (prompts,
    context states, toolsets) are written as on any :class:`ToolCard`.

    Example::

        class TallyTool(CapabilityCard):
            tally: Tally | bool = True

            def capabilities(self) -> list[Capability]:
                return [Capability("tally", self._build_tally, SAME_AS_TOOL)]
    """

    @abstractmethod
    def capabilities(self) -> Sequence[Capability]:
        """This card's capabilities, in the order their tools and commands are served."""

    def get_tools(self) -> list[Callable[..., Any]]:
        """The tool surface of :meth:`capabilities`."""
        return serve_tools(self, self.capabilities())

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        """The command surface of :meth:`capabilities`, keyed by param class."""
        return serve_commands(self, self.capabilities())
