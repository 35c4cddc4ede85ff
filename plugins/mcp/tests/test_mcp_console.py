"""A card uploaded to the console may not start a stdio MCP server unless the operator allows it.

The hostile card's server is a Python one-liner that leaves a marker file: a refused
card must leave none, ever (not at creation, not after a message).
"""

from __future__ import annotations

import sys
from pathlib import Path

from akgentic_mcp import MCPHTTPConnectionConfig, MCPStdioConnectionConfig, MCPTool

from akgentic.llm.scripted_server import ScriptedLLMServer
from akgentic.testing.cards import human_worker_team_yaml
from akgentic.testing.console import running_console


def _card(llm_server: ScriptedLLMServer, marker: Path) -> str:
    """A worker with a stdio MCP server whose command leaves ``marker`` if it ever runs."""
    connection = {
        "stdio_command": sys.executable,
        "stdio_args": ["-c", f"open({str(marker)!r}, 'w').write('ran on the host')"],
        "stdio_env": {"INLINE_KEY": "inline-s3cret-value"},
    }
    return human_worker_team_yaml(
        "mcp-team",
        human_description="The person at the console",
        worker_description="Has an MCP server",
        prompt="You work.",
        model_cfg={
            "provider": "openai-chat",
            "model": llm_server.model,
            "base_url": llm_server.base_url,
            "api_key": "scripted",
        },
        tools=[{"card": "mcp", "connection": connection}],
    )


def test_the_mcp_card_lists_a_stdio_server_as_a_host_process_and_http_as_none() -> None:
    stdio = MCPTool(connection=MCPStdioConnectionConfig(stdio_command="uvx", stdio_args=["srv"]))
    assert stdio.host_processes() == ["stdio MCP server: 'uvx srv'"]
    http = MCPTool(connection=MCPHTTPConnectionConfig(url="https://mcp.example.com/mcp"))
    assert http.host_processes() == []


def test_the_console_refuses_an_uploaded_stdio_mcp_card_and_nothing_runs(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    with running_console(f"sqlite:///{tmp_path}/c.db") as (_server, client):
        refused = client.post("/api/teams", json={"card": _card(llm_server, marker)})
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert "@Worker" in detail and "'mcp'" in detail and "stdio MCP server" in detail
        assert "--allow-host-processes" in detail and "AKGENTIC_ALLOW_HOST_PROCESSES" in detail
        assert client.get("/api/teams").json() == []
    assert not marker.exists()


def test_an_operator_who_allows_host_processes_can_create_it(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    console = running_console(f"sqlite:///{tmp_path}/c.db", allow_host_processes=True)
    with console as (_server, client):
        created = client.post("/api/teams", json={"card": _card(llm_server, marker)})
        assert created.status_code == 201, created.text
        team_id = created.json()["team_id"]
        # The inline stdio_env value is a secret: masked in the inspector's view of the log.
        count = client.get(f"/api/teams/{team_id}").json()["event_count"]
        assert count >= 1
        shown = [client.get(f"/api/teams/{team_id}/events/{n}").text for n in range(1, count + 1)]
        assert any("INLINE_KEY" in text for text in shown)  # the card is in the log...
        assert not any("inline-s3cret-value" in text for text in shown)  # ...its secret is not
        client.post(f"/api/teams/{team_id}/stop")
    for path in tmp_path.rglob("c.db*"):
        if path.is_file():
            assert b"inline-s3cret-value" not in path.read_bytes(), path
