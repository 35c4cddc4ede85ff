"""Serve one akgentic team as an MCP server: ``akgentic mcp serve TEAM``.

See ``docs/mcp-server.md``. Importing this package imports neither the ``mcp`` SDK nor
the kernel's team layer; :mod:`akgentic_mcp_server.server` does.
"""
