"""Checking a connection by hand: list a server's tools, or probe whether it is usable."""

from __future__ import annotations

import logging
from typing import Any

from akgentic_mcp.config import MCPHTTPConnectionConfig, MCPStdioConnectionConfig, describe_server

__all__ = ["list_mcp_tools", "probe_mcp_connection"]

logger = logging.getLogger(__name__)


async def list_mcp_tools(
    connection: MCPHTTPConnectionConfig | MCPStdioConnectionConfig,
) -> list[str]:
    """The server's own tool names (no prefix, no guard); connection errors propagate.

    A host variable the operator did not allow raises
    :class:`~akgentic_mcp.config.EnvNotAllowedError` before anything connects.
    """
    from pydantic_ai.mcp import MCPToolset

    from akgentic_mcp.toolset import build_transport

    connection.check_allowed_env()
    logger.debug("listing the tools of %s", describe_server(connection))
    toolset: MCPToolset[Any] = MCPToolset(
        build_transport(connection),
        init_timeout=connection.timeout,
        read_timeout=connection.read_timeout,
        include_instructions=False,
    )
    async with toolset:
        tools = await toolset.list_tools()
    return [tool.name for tool in tools]


async def probe_mcp_connection(
    connection: MCPHTTPConnectionConfig | MCPStdioConnectionConfig,
    *,
    max_tools_to_print: int = 20,
) -> dict[str, Any]:
    """``{"tool_count", "tools" (the first names), "feasible"}`` for ``connection``."""
    names = await list_mcp_tools(connection)
    logger.debug("%s offers %d tools", describe_server(connection), len(names))
    return {
        "tool_count": len(names),
        "tools": names[:max_tools_to_print],
        "feasible": len(names) > 0,
    }
