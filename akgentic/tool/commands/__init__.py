"""Slash commands for tool cards: the registry, the line grammar and discovery models.

A tool card offers commands on the COMMAND channel; the tool factory collects them
into one :class:`CommandRegistry` per agent. Code calls them through
``registry.callable(name)``; humans type ``/name args`` and the agent hands the line
to ``registry.dispatch``. See ``docs/commands.md`` for the grammar.
"""

from akgentic.tool.commands.models import CommandArg, CommandDescriptor
from akgentic.tool.commands.registry import CommandRegistry, CommandSource
from akgentic.tool.commands.rest_of_line import REST_OF_LINE, RestOfLine, RestOfLineMarker

__all__ = [
    "REST_OF_LINE",
    "CommandArg",
    "CommandDescriptor",
    "CommandRegistry",
    "CommandSource",
    "RestOfLine",
    "RestOfLineMarker",
]
