"""The ``mcp`` card: one MCP server's tools for an agent.

Also importable as ``akgentic.tool.mcp`` (a seed import path this plugin serves).
The MCP client libraries are imported only when a toolset is built.
"""

from akgentic_mcp.card import MCPTool
from akgentic_mcp.config import (
    ALLOWED_ENV_VAR,
    EnvNotAllowedError,
    MCPConnectionConfig,
    MCPDiagnosticsConfig,
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
)
from akgentic_mcp.diagnostics import list_mcp_tools, probe_mcp_connection

__all__ = [
    "ALLOWED_ENV_VAR",
    "EnvNotAllowedError",
    "MCPConnectionConfig",
    "MCPDiagnosticsConfig",
    "MCPHTTPConnectionConfig",
    "MCPStdioConnectionConfig",
    "MCPTool",
    "list_mcp_tools",
    "probe_mcp_connection",
]
