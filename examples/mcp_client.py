"""Talk to an akgentic team from an MCP client: docs/mcp-server.md, as written.

Starts ``akgentic mcp serve examples/replier-team.yaml`` over stdio with the official
``mcp`` client (the way Claude Desktop or an IDE starts it), calls the ``ask`` tool and
prints the team's answer. Needs the ``akgentic-mcp-server`` plugin.

    python examples/mcp_client.py [STORE_URL]
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

CARD = Path(__file__).resolve().with_name("replier-team.yaml")


async def main(store: str) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "akgentic.cli", "mcp", "serve", str(CARD), "--store", store],
        # The SDK starts the server with a minimal environment; keep the import path.
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    async with Client(server) as client:
        result = await client.call_tool("ask", {"text": "Hello from MCP!"})
        print(result.content[0].text if result.content[0].type == "text" else result)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///.akgentic/akgentic.db"))
