"""MCPTool runs the shared ToolCardContract (it serves a toolset only, nothing connects)."""

from __future__ import annotations

import pytest
from akgentic_mcp import MCPHTTPConnectionConfig, MCPStdioConnectionConfig, MCPTool

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestMCPToolContract(ToolCardContract):
    """MCPTool, registered as ``mcp`` by this distribution's plugin module."""

    card_name = "mcp"
    plugin = "akgentic_mcp.plugin"

    @pytest.fixture(params=["http", "stdio"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "http":
            return MCPTool(
                connection=MCPHTTPConnectionConfig(
                    url="https://mcp.example.com/mcp", tool_prefix="ex"
                )
            )
        return MCPTool(
            connection=MCPStdioConnectionConfig(stdio_command="uvx", stdio_args=["some-server"]),
            max_result_chars=5000,
        )
