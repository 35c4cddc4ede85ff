"""Serializable discovery records describing the commands of a registry.

Frontends read these (for example from the event an agent emits at start-up) to show
which slash commands exist and what they accept, without importing the tool code. They
travel inside persisted events, so they are serializable models tagged with their class
path like every other stored model.
"""

from __future__ import annotations

from pydantic import ConfigDict

from akgentic.core.utils.serializer import SerializableBaseModel

__all__ = ["CommandArg", "CommandDescriptor"]


class CommandArg(SerializableBaseModel):
    """One parameter of a command, as a user typing the command sees it.

    Attributes:
        name: Parameter name; also the ``name=`` keyword accepted on the command line.
        type: Human-readable type, e.g. ``"int"``, ``"list[str]"``, ``"str | None"``.
        required: True when the parameter has no default.
        description: Text from the ``Args:`` section of the docstring, if any.
        keyword_only: True when the value can only be given as ``name=value``.
        rest_of_line: True when the parameter swallows the raw remainder of the line.
        choices: Accepted spellings for ``Literal`` and ``Enum`` types, else None.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    type: str
    required: bool
    description: str | None = None
    keyword_only: bool = False
    rest_of_line: bool = False
    choices: list[str] | None = None


class CommandDescriptor(SerializableBaseModel):
    """A registered command: its name, what it does, its arguments and its owner.

    Attributes:
        name: Command name, typed after the ``/``.
        description: First paragraph of the callable's docstring ("" when absent).
        args: Parameters in declaration order.
        tool_card: Label of the tool card (or other owner) that provided the command.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    args: list[CommandArg]
    tool_card: str
