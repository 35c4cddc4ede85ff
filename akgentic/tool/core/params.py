"""``BaseToolParam``: the per-capability configuration of a tool card."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ConfigDict, Field, field_serializer

from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.tool.core.channels import Channels

__all__ = ["BaseToolParam", "P", "resolve_param"]

P = TypeVar("P", bound="BaseToolParam")
F = TypeVar("F", bound=Callable[..., Any])

_INSTRUCTIONS_HEADER = "Additional Instructions:"
# Section starts of Google (``Args:``), Sphinx (``:param x:``) and NumPy docstrings.
_SECTION = re.compile(
    r"^(?:(?:args|arguments|parameters|params|keyword args|keyword arguments|other parameters"
    r"|returns?|yields?|receives?|raises|warns|warnings?|examples?|notes?|references|attributes"
    r"|methods|todo|see also)\s*:\s*$|:(?:param|parameter|arg|argument|key|keyword|type|raises?"
    r"|returns?|rtype|yields?)\b)",
    re.IGNORECASE,
)
_UNDERLINE = re.compile(r"^-{3,}\s*$")


def _first_section(lines: list[str]) -> int:
    """Index of the line starting the first docstring section (``len(lines)`` if none)."""
    for index, line in enumerate(lines):
        if index == 0:
            continue  # the summary line is never a section
        if _SECTION.match(line) or (
            index + 1 < len(lines) and line.strip() and _UNDERLINE.match(lines[index + 1])
        ):
            return index
    return len(lines)


class BaseToolParam(SerializableBaseModel):
    """Configuration of one capability of a card (one tool, prompt, state or command).

    A card declares each capability as a field typed ``SomeParam | bool``: ``False``
    turns the capability off, ``True`` uses the param's defaults, an instance
    configures it. Subclasses add fields only when the card reads them while building
    the capability (a closure variable, a default, a setup value); the arguments the
    model or a human passes belong on the built function's signature, not here.

    Attributes:
        instructions: Extra guidance appended to the built function's docstring (the
            text the model reads), so a team can add constraints without code.
        expose: The channels this capability is served on. Dumped sorted so that a
            card's serialized form is stable.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=False, defer_build=False)

    instructions: str | None = None
    expose: set[Channels] = Field(default_factory=lambda: {Channels.TOOL_CALL})

    @field_serializer("expose")
    def _sorted_expose(self, expose: set[Channels]) -> list[str]:
        return sorted(channel.value for channel in expose)

    def format_docstring(self, original: str | None) -> str:
        """Return ``original`` with :attr:`instructions` added, when there are any.

        The block goes at the end of the description, before the first section
        (``Args:``, ``Returns:``...; NumPy and Sphinx fields too), and the docstring
        is dedented: the parser that builds the tool schema then still finds every
        argument's description, and the model reads the instructions in the tool's
        description rather than losing them after the sections.
        """
        if not self.instructions:
            return original or ""
        block = f"{_INSTRUCTIONS_HEADER}\n{self.instructions.strip()}"
        lines = inspect.cleandoc(original or "").splitlines()
        at = _first_section(lines)
        head = "\n".join(lines[:at]).rstrip()
        tail = "\n".join(lines[at:]).strip()
        return "\n\n".join(part for part in (head, block, tail) if part)

    def apply_instructions(self, func: F) -> F:
        """Set ``func.__doc__`` through :meth:`format_docstring` and return ``func``.

        Use it on the closure a card builds, before handing it to the factory.
        """
        func.__doc__ = self.format_docstring(func.__doc__)
        return func

    def serves(self, channel: Channels) -> bool:
        """True when this capability is exposed on ``channel``."""
        return channel in self.expose


def resolve_param(
    value: P | bool | None, cls: type[P], channel: Channels | None = None
) -> P | None:
    """Apply the two-step gate that decides whether a capability is served.

    ``False`` (or None) means off; ``True`` means ``cls()`` with its defaults; an
    instance is used as is. With a ``channel``, the result is None unless that channel
    is in the param's ``expose`` set: each card hook passes the channel it serves.

    Example::

        say = resolve_param(self.say, Say, TOOL_CALL)
        if say is not None:
            tools.append(say.apply_instructions(build_say()))
    """
    if value is None or value is False:
        return None
    param = cls() if value is True else value
    if not isinstance(param, cls):
        raise TypeError(f"expected {cls.__name__} or a bool, got {type(value).__name__}")
    if channel is not None and channel not in param.expose:
        return None
    return param


_resolve = resolve_param
