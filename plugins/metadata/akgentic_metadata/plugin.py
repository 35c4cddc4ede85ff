"""Hook implementation of the metadata plugin: registers :class:`MetadataTool`."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import ToolCardSpec, hookimpl
from akgentic_metadata.card import MetadataTool


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``metadata`` card and the ``akgentic.tool.metadata`` import path."""
    return [
        ToolCardSpec(
            name="metadata",
            card=MetadataTool,
            description="Render the team's business metadata into the system prompt.",
            import_paths=("akgentic.tool.metadata",),
        )
    ]
