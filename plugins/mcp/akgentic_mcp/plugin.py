"""Hook implementation of the mcp plugin: registers :class:`MCPTool` as ``mcp``."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import ToolCardSpec, hookimpl
from akgentic_mcp.card import MCPTool


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``mcp`` card and the ``akgentic.tool.mcp`` import path."""
    return [
        ToolCardSpec(
            name="mcp",
            card=MCPTool,
            description="The tools of one MCP server (streamable HTTP, SSE or stdio).",
            import_paths=("akgentic.tool.mcp",),
        )
    ]
