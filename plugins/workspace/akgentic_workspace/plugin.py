"""Hook implementation of the workspace plugin: registers ``WorkspaceTool`` as ``workspace``."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugins import ToolCardSpec, hookimpl
from akgentic_workspace.console_pane import akgentic_console_panes as akgentic_console_panes

#: The product documents' module path this plugin answers for.
IMPORT_PATHS = ("akgentic.tool.workspace",)


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``workspace`` card and the ``akgentic.tool.workspace`` import path."""
    from akgentic_workspace.card import WorkspaceTool

    return [
        ToolCardSpec(
            name="workspace",
            card=WorkspaceTool,
            description="The team's files behind a write gate, a git journal, sandboxed exec",
            import_paths=IMPORT_PATHS,
        )
    ]
