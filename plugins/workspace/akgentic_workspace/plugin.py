"""Hook implementation of the workspace plugin: registers ``WorkspaceTool`` as ``workspace``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from akgentic.plugins import ToolCardSpec, hookimpl

#: The product documents' module path this plugin answers for.
IMPORT_PATHS = ("akgentic.tool.workspace",)


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``workspace`` card and the ``akgentic.tool.workspace`` import path."""
    from akgentic_workspace.card import WorkspaceTool

    extra: dict[str, Any] = {}
    # The import-path field arrives with the seed-import-path mechanism; older kernels
    # without it still register the card.
    if any(f.name == "import_paths" for f in dataclasses.fields(ToolCardSpec)):
        extra["import_paths"] = IMPORT_PATHS
    return [
        ToolCardSpec(
            name="workspace",
            card=WorkspaceTool,
            description="The team's files behind a write gate, a git journal, sandboxed exec",
            **extra,
        )
    ]
