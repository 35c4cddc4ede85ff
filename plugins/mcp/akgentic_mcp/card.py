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

from akgentic.plugin_api import ToolCard
from akgentic_mcp.config import MCPConnectionConfig, MCPStdioConnectionConfig

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
        max_description_chars: Longest tool description passed to the model (at
            least 100); longer ones are cut with a note. None for no cap.
        max_schema_chars: Longest tool input schema, as JSON (at least 1000); a
            longer one is replaced by a permissive object schema and a note in the
            description. None for no cap.
        max_tools: Most tools offered from this server (the first ones it lists);
            None for no cap.
    """

    connection: MCPConnectionConfig
    max_result_chars: int | None = Field(default=100_000, ge=1000)
    max_description_chars: int | None = Field(default=4_000, ge=100)
    max_schema_chars: int | None = Field(default=20_000, ge=1000)
    max_tools: int | None = Field(default=100, ge=1)

    def get_tools(self) -> list[Callable[..., Any]]:
        return []

    def get_toolsets(self) -> list[Any]:
        """Exactly one toolset, the server's inside its guard; nothing connects yet."""
        from akgentic_mcp.toolset import guarded

        return [
            guarded(
                self.connection,
                self.max_result_chars,
                self.max_description_chars,
                self.max_schema_chars,
                self.max_tools,
            )
        ]

    def host_processes(self) -> list[str]:
        """A stdio server is a program started on the host, outside any sandbox."""
        connection = self.connection
        if not isinstance(connection, MCPStdioConnectionConfig):
            return []
        command = " ".join([connection.stdio_command, *connection.stdio_args])
        if len(command) > 200:
            command = command[:200] + "…"
        return [f"stdio MCP server: {command!r}"]
