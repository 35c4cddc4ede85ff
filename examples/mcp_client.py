"""Talk to an akgentic team from an MCP client: docs/mcp-server.md, as written.

Starts ``akgentic mcp serve examples/replier-team.yaml`` over stdio with the official
``mcp`` client (the way Claude Desktop or an IDE starts it), calls the ``ask`` tool and
prints the team's answer. With ``--task`` the client declares the MCP tasks extension:
``ask`` returns a task at once, and the client waits for its result with
``tasks/result``, printing the turn's progress on stderr. Needs the
``akgentic-mcp-server`` plugin.

    python examples/mcp_client.py [--task] [STORE_URL]
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from akgentic_mcp_server.task_client import TasksClient, task_result
from mcp import Client, StdioServerParameters

CARD = Path(__file__).resolve().with_name("replier-team.yaml")


async def print_progress(progress: float, total: float | None, message: str | None) -> None:
    print(f"progress {progress:g}: {message}", file=sys.stderr)


async def main(store: str, as_task: bool) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "akgentic.cli", "mcp", "serve", str(CARD), "--store", store],
        # The SDK starts the server with a minimal environment; keep the import path.
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    if not as_task:
        async with Client(server) as client:
            result = await client.call_tool("ask", {"text": "Hello from MCP!"})
            print(result.content[0].text if result.content[0].type == "text" else result)
        return
    async with Client(server, extensions=[TasksClient()]) as client:
        task = await client.session.call_tool(
            "ask", {"text": "Hello from MCP!"}, allow_claimed=True
        )
        task_id = getattr(task, "task_id", None)
        if task_id is None:  # a server without tasks answers at once
            raise SystemExit(f"no task: {task}")
        print(f"task {task_id}", file=sys.stderr)
        result = await task_result(client.session, task_id, progress=print_progress)
        print(result.content[0].text if result.content[0].type == "text" else result)


if __name__ == "__main__":
    args = [arg for arg in sys.argv[1:] if arg != "--task"]
    store = args[0] if args else "sqlite:///.akgentic/akgentic.db"
    asyncio.run(main(store, "--task" in sys.argv[1:]))
