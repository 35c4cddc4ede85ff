"""MCPTool over streamable HTTP on 127.0.0.1, dead servers, diagnostics and configuration."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from akgentic_mcp import (
    MCPDiagnosticsConfig,
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
    MCPTool,
    list_mcp_tools,
    probe_mcp_connection,
)
from akgentic_mcp.toolset import build_transport, cap_result
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.llm.agent import ReactAgent
from akgentic.tool import ToolCard


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def http_url(http_server: Callable[[int], AbstractContextManager[None]]) -> Iterator[str]:
    """A real MCP server over streamable HTTP, started once for the module."""
    port = free_port()
    with http_server(port):
        yield f"http://127.0.0.1:{port}/mcp"


class Driver:
    """A scripted model recording the tools it is offered."""

    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        self.plan = list(calls)
        self.offered: list[list[str]] = []
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.offered.append(sorted(tool.name for tool in info.function_tools))
        self.seen.append(list(messages))
        if self.plan:
            name, args = self.plan.pop(0)
            return ModelResponse(parts=[ToolCallPart(tool_name=name, args=args)])
        return ModelResponse(parts=[TextPart("done")])


def run_once(card: MCPTool, driver: Driver) -> None:
    agent: ReactAgent[Any] = ReactAgent(model=FunctionModel(driver), toolsets=card.get_toolsets())
    with agent:
        assert agent.run_sync("go") == "done"


def test_a_prefixed_http_server_tool_is_offered_and_called(http_url: str) -> None:
    card = MCPTool(connection=MCPHTTPConnectionConfig(url=http_url, tool_prefix="acme"))
    driver = Driver(("acme_echo", {"text": "over http"}))
    run_once(card, driver)
    assert "acme_echo" in driver.offered[0] and "echo" not in driver.offered[0]
    returns = [p for m in driver.seen[-1] for p in m.parts if p.part_kind == "tool-return"]
    assert [p.content for p in returns] == ["echo:over http"]


def test_diagnostics_list_bare_names_and_probe_counts(http_url: str) -> None:
    connection = MCPHTTPConnectionConfig(url=http_url, tool_prefix="acme")
    names = asyncio.run(list_mcp_tools(connection))
    assert "echo" in names and "acme_echo" not in names
    probe = asyncio.run(probe_mcp_connection(connection, max_tools_to_print=1))
    assert probe == {"tool_count": len(names), "tools": names[:1], "feasible": True}
    with pytest.raises(ValidationError):
        MCPDiagnosticsConfig(max_tools_to_print=0)


@pytest.mark.parametrize(
    "connection",
    [
        MCPStdioConnectionConfig(stdio_command="no-such-command-xyz"),
        MCPHTTPConnectionConfig(url="http://127.0.0.1:9/mcp", timeout=1),
    ],
    ids=["missing-command", "refused-connection"],
)
def test_a_dead_server_gives_the_run_no_tools_and_one_warning(
    connection: Any, caplog: pytest.LogCaptureFixture
) -> None:
    driver = Driver()
    with caplog.at_level(logging.WARNING, logger="akgentic_mcp"):
        run_once(MCPTool(connection=connection), driver)
    assert driver.offered == [[]]
    warnings = [r.getMessage() for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(warnings) == 1
    assert ("no-such-command-xyz" in warnings[0]) or ("127.0.0.1:9/mcp" in warnings[0])


def test_a_server_that_never_answers_times_out_without_failing_the_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never speaks
    try:
        port = silent.getsockname()[1]
        card = MCPTool(
            connection=MCPHTTPConnectionConfig(url=f"http://127.0.0.1:{port}/mcp", timeout=1)
        )
        driver = Driver()
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="akgentic_mcp"):
            run_once(card, driver)
        assert driver.offered == [[]]
        assert time.monotonic() - started < 60
    finally:
        silent.close()


def test_credentials_and_query_are_kept_out_of_the_server_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = "http://user:pw@127.0.0.1:9/mcp?token=abc"
    with caplog.at_level(logging.WARNING, logger="akgentic_mcp"):
        run_once(MCPTool(connection=MCPHTTPConnectionConfig(url=url, timeout=1)), Driver())
    text = " ".join(r.getMessage() for r in caplog.records)
    assert "127.0.0.1:9/mcp" in text
    assert "pw" not in text and "token=abc" not in text


@pytest.mark.parametrize(
    "data",
    [
        {"transport": "stdio"},
        {"url": "ftp://x"},
        {"url": "https:///nohost"},
        {"stdio_command": "   "},
        {"stdio_command": "x", "bearer_token": "t"},
        {"stdio_command": "x", "stdio_token_env_var": "T"},
        {"url": "https://h/mcp", "tool_prefix": "9x"},
        {"url": "https://h/mcp", "unknown": 1},
        {"url": "https://h/mcp", "bearer_token": "a", "bearer_token_env": "B"},
    ],
)
def test_bad_connections_are_refused_when_the_card_loads(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        MCPTool.model_validate({"connection": data})


def test_the_transport_is_picked_from_the_mapping_and_always_honoured() -> None:
    http = MCPTool.model_validate({"connection": {"url": "https://h/mcp"}}).connection
    assert isinstance(http, MCPHTTPConnectionConfig) and http.transport == "streamable-http"
    stdio = MCPTool.model_validate({"connection": {"stdio_command": "uvx"}}).connection
    assert isinstance(stdio, MCPStdioConnectionConfig)
    sse = MCPHTTPConnectionConfig(url="https://h/events", transport="sse", read_timeout=42)
    transport = build_transport(sse)
    assert type(transport).__name__ == "SSETransport"
    assert transport.sse_read_timeout is not None
    assert float(getattr(transport.sse_read_timeout, "total_seconds", lambda: 42)()) == 42
    default = build_transport(MCPHTTPConnectionConfig(url="https://h/events"))
    assert type(default).__name__ == "StreamableHttpTransport"


def test_the_card_round_trips_by_name() -> None:
    card = MCPTool(connection=MCPHTTPConnectionConfig(url="https://h/mcp", tool_prefix="acme"))
    assert ToolCard.model_validate(card.model_dump()) == card


def test_results_are_cut_on_their_text_or_json_rendering() -> None:
    assert cap_result("short", 1000) == "short"
    assert cap_result("y" * 1500, 1000) == "y" * 1000 + "[… truncated: 500 characters omitted]"
    cut = cap_result({"k": "z" * 2000}, 1000)
    assert isinstance(cut, str) and cut.endswith("characters omitted]")
    assert cap_result("y" * 1500, None) == "y" * 1500
    with pytest.raises(ValidationError):
        MCPTool(connection=MCPHTTPConnectionConfig(url="https://h/mcp"), max_result_chars=10)


def test_an_http_token_goes_on_the_transport_as_a_bearer_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AKGENTIC_TEST_MCP_TOKEN", "t0ken")
    monkeypatch.setenv("AKGENTIC_MCP_ALLOWED_ENV", "OTHER, AKGENTIC_TEST_MCP_TOKEN")
    transport = build_transport(
        MCPHTTPConnectionConfig(url="https://h/mcp", bearer_token_env="AKGENTIC_TEST_MCP_TOKEN")
    )
    assert transport.headers == {"Authorization": "Bearer t0ken"}
    bare = build_transport(MCPHTTPConnectionConfig(url="https://h/mcp"))
    assert not bare.headers


def test_a_server_that_comes_up_later_is_used_by_the_next_run(
    http_server: Callable[[int], AbstractContextManager[None]],
) -> None:
    port = free_port()
    card = MCPTool(
        connection=MCPHTTPConnectionConfig(url=f"http://127.0.0.1:{port}/mcp", timeout=5)
    )
    driver = Driver()
    agent: ReactAgent[Any] = ReactAgent(model=FunctionModel(driver), toolsets=card.get_toolsets())
    with agent:
        assert agent.run_sync("first") == "done"
        assert driver.offered == [[]]
        with http_server(port):
            driver.plan = [("echo", {"text": "back"})]
            assert agent.run_sync("second") == "done"
            assert "echo" in driver.offered[1]


def test_a_card_cannot_send_a_host_variable_the_operator_did_not_allow(
    http_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from akgentic_mcp import EnvNotAllowedError

    monkeypatch.setenv("AKGENTIC_TEST_HOST_KEY", "host-api-key")
    monkeypatch.setenv("AKGENTIC_MCP_ALLOWED_ENV", "SOME_OTHER_TOKEN")
    connection = MCPHTTPConnectionConfig(
        url=http_url, bearer_token_env="AKGENTIC_TEST_HOST_KEY", timeout=5
    )
    with pytest.raises(EnvNotAllowedError, match="AKGENTIC_MCP_ALLOWED_ENV"):
        connection.token()
    card = MCPTool(connection=connection)
    driver = Driver()
    agent: ReactAgent[Any] = ReactAgent(model=FunctionModel(driver), toolsets=card.get_toolsets())
    with agent, caplog.at_level(logging.WARNING, logger="akgentic_mcp"):
        assert agent.run_sync("go") == "done"
        assert agent.run_sync("again") == "done"
    assert driver.offered == [[], []]  # never connected, so the key was never sent
    refusals = [r.getMessage() for r in caplog.records if "not reached" in r.getMessage()]
    assert len(refusals) == 1
    assert "AKGENTIC_TEST_HOST_KEY" in refusals[0] and "AKGENTIC_MCP_ALLOWED_ENV" in refusals[0]
    assert "host-api-key" not in caplog.text

    with pytest.raises(EnvNotAllowedError, match="AKGENTIC_TEST_HOST_KEY"):
        asyncio.run(list_mcp_tools(connection))
    monkeypatch.setenv("AKGENTIC_MCP_ALLOWED_ENV", "AKGENTIC_TEST_HOST_KEY")
    allowed = Driver()
    run_once(MCPTool(connection=connection), allowed)
    assert "echo" in allowed.offered[0]


def test_a_server_offering_too_many_tools_is_cut_to_max_tools(
    http_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    card = MCPTool(connection=MCPHTTPConnectionConfig(url=http_url), max_tools=2)
    driver = Driver()
    with caplog.at_level(logging.WARNING, logger="akgentic_mcp"):
        run_once(card, driver)
    assert len(driver.offered[0]) == 2
    assert any("offers 6 tools" in r.getMessage() for r in caplog.records)


def test_a_password_in_the_url_is_masked_in_dumps_and_reads_back_as_none() -> None:
    card = MCPTool(connection=MCPHTTPConnectionConfig(url="https://me:pa55word@h:8443/mcp?x=1"))
    dumped = card.model_dump_json()
    assert "pa55word" not in dumped
    assert card.model_dump()["connection"]["url"] == "https://me:**********@h:8443/mcp?x=1"
    reloaded = MCPTool.model_validate_json(dumped)
    assert isinstance(reloaded.connection, MCPHTTPConnectionConfig)
    assert reloaded.connection.url == "https://me@h:8443/mcp?x=1"
    with pytest.raises(ValidationError) as refused:
        MCPHTTPConnectionConfig(url="ftp://me:pa55word@h/mcp")
    assert "pa55word" not in str(refused.value).split("input_value")[0]
