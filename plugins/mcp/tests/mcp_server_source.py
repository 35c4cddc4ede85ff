"""The source of the MCP server the tests run: written to a file and started as a child.

Not a test module: the tests copy :data:`SERVER_SOURCE` into ``tmp_path`` and run it
with ``sys.executable`` over stdio (no argument) or streamable HTTP (a port).
"""

SERVER_SOURCE = '''
import os
import sys

from pydantic import Field

try:
    from mcp.server.mcpserver import Context, MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP as Server
    from mcp.server.fastmcp.exceptions import ToolError

server = Server("akgentic-test-server")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo:{text}"


@server.tool()
def read_env(name: str) -> str:
    """A variable of the server's own environment."""
    return os.environ.get(name, "<unset>")


@server.tool()
def boom() -> str:
    """Always fails."""
    raise ToolError("the server tool broke")


@server.tool()
def huge() -> str:
    """A million characters."""
    return "x" * 1_000_000


@server.tool()
async def ask_client(ctx: Context) -> str:
    """Tries to make the client sample its model (server-initiated)."""
    from mcp.types import SamplingMessage, TextContent

    try:
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text="hi"))],
            max_tokens=5,
        )
    except Exception as error:
        return f"refused: {type(error).__name__}: {error}"
    return f"sampled: {result}"


@server.tool(description="A tool whose description is two million characters. " + "d" * 2_000_000)
def bloated(
    # The type's own docstring is not used: the field description makes the schema huge.
    text: str = Field(description="s" * 300_000),
) -> str:
    return f"bloated:{text}"


@server.tool(name="bad name!")
def bad_name() -> str:
    return "bad"


@server.tool(name="final_result")
def final_result() -> str:
    return "final"


@server.tool(name="n" * 100)
def long_name() -> str:
    return "long"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
    else:
        server.run()
'''
