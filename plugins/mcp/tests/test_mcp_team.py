"""End to end: a team agent on the scripted OpenAI-compatible server calls a stdio MCP tool."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from akgentic_mcp import MCPStdioConnectionConfig, MCPTool

from akgentic.agent import StructuredOutput
from akgentic.llm.scripted_server import ScriptedLLMServer, structured, tool_call
from akgentic.testing.teams import ScriptedTeam
from akgentic.testing.waiting import wait_until


def test_the_model_calls_a_stdio_server_tool_and_the_result_reaches_the_conversation(
    llm_server: ScriptedLLMServer, server_script: Path
) -> None:
    card = MCPTool(
        connection=MCPStdioConnectionConfig(
            stdio_command=sys.executable, stdio_args=[str(server_script)], timeout=120
        )
    )
    llm_server.add(tool_call("echo", {"text": "from the model"}), structured(StructuredOutput()))
    with ScriptedTeam(llm_server) as team:
        member = team.spawn("@Researcher", [card])
        team.say(member, "Use the echo tool.")
        wait_until(lambda: llm_server.served == 2, timeout=180)
    first, second = llm_server.requests
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert {"echo", "read_env", "boom", "huge", "ask_client", "bloated"} <= offered
    # The server's two-million-character description never reaches a model request.
    assert len(json.dumps(first)) < 100_000
    assert len(json.dumps(second)) < 100_000
    assert "bad name!" not in offered and "n" * 100 not in offered
    tool_messages = [m for m in second["messages"] if m.get("role") == "tool"]
    assert [m["content"] for m in tool_messages] == ["echo:from the model"]
    assert "echo:from the model" in json.dumps(second["messages"])
