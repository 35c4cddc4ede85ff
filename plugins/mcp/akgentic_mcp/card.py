"""``MCPTool``: one external MCP server's tools, offered to the agent as a toolset.

The card serves no channel of its own (``get_tools()`` is empty): its only product is
the toolset :meth:`MCPTool.get_toolsets` builds, which connects lazily when the
agent first runs and stays open for the agent's life (the kernel holds toolsets
open), so a stdio server is spawned once per agent, not once per turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from akgentic.tool import ToolCard
from akgentic_mcp.config import MCPConnectionConfig

__all__ = ["MCPTool"]


class MCPTool(ToolCard):
    """The tools of one MCP server.

    Example YAML in a team file::

        tools:
          - card: mcp
            connection: {url: "https://mcp.example.com/mcp", bearer_token_env: EXAMPLE_TOKEN}
          - card: mcp
            connection: {stdio_command: uvx, stdio_args: [some-mcp-server], tool_prefix: fs}

    Attributes:
        connection: The server and how to reach it.
        max_result_chars: Longest tool result passed to the model (at least 1000);
            None for no cap.
    """

    connection: MCPConnectionConfig
    max_result_chars: int | None = Field(default=100_000, ge=1000)

    def get_tools(self) -> list[Callable[..., Any]]:
        return []

    def get_toolsets(self) -> list[Any]:
        """Exactly one toolset, the server's inside its guard; nothing connects yet."""
        from akgentic_mcp.toolset import guarded

        return [guarded(self.connection, self.max_result_chars)]
