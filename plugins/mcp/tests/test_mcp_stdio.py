"""MCPTool against a real MCP server over stdio, spawned once for the module.

The server is a script written by the test (``mcp`` package); an agent (the kernel's
``ReactAgent`` on a pydantic-ai ``FunctionModel``) calls its tools through the card's
toolset, so the model's view (offered tools, tool returns) is what is checked.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from akgentic_mcp import MCPStdioConnectionConfig, MCPTool
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.llm.agent import ReactAgent


class Driver:
    """The scripted model: plays planned tool calls, records what it was offered and sent."""

    def __init__(self) -> None:
        self.plan: list[tuple[str, dict[str, Any]]] = []
        self.offered: list[list[str]] = []
        self.definitions: dict[str, Any] = {}
        self.seen: list[list[ModelMessage]] = []
        self.run_start = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.offered.append(sorted(tool.name for tool in info.function_tools))
        self.definitions = {tool.name: tool for tool in info.function_tools}
        self.seen.append(list(messages))
        if self.plan:
            name, args = self.plan.pop(0)
            return ModelResponse(parts=[ToolCallPart(tool_name=name, args=args)])
        return ModelResponse(parts=[TextPart("done")])

    def last_returns(self) -> list[Any]:
        """Tool returns and retry prompts of the latest run only."""
        parts = [p for m in self.seen[-1][self.run_start :] for p in getattr(m, "parts", [])]
        return [p for p in parts if isinstance(p, ToolReturnPart | RetryPromptPart)]


class Warnings(logging.Handler):
    """Keeps the WARNING records of the MCP plugin for the whole module."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def warnings() -> Iterator[Warnings]:
    handler = Warnings()
    logger = logging.getLogger("akgentic_mcp")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def session(
    server_script: Path, warnings: Warnings
) -> Iterator[tuple[ReactAgent[Any], Driver, MCPTool]]:
    """One agent and one server child for the module (a spawn costs seconds here)."""
    os.environ["AKGENTIC_TEST_PARENT_SECRET"] = "parent-only"
    os.environ["AKGENTIC_TEST_TOKEN_SOURCE"] = "s3cret"
    os.environ["AKGENTIC_TEST_CHILD_KEY"] = "child-key"
    os.environ["AKGENTIC_MCP_ALLOWED_ENV"] = "AKGENTIC_TEST_TOKEN_SOURCE,AKGENTIC_TEST_CHILD_KEY"
    card = MCPTool(
        connection=MCPStdioConnectionConfig(
            stdio_command=sys.executable,
            stdio_args=[str(server_script)],
            stdio_env={"GREETING": "hello", "INLINE_SECRET": "inline-value"},
            stdio_env_from={"CHILD_KEY": "AKGENTIC_TEST_CHILD_KEY"},
            bearer_token_env="AKGENTIC_TEST_TOKEN_SOURCE",
            stdio_token_env_var="TEST_TOKEN",
            timeout=60,
        )
    )
    driver = Driver()
    agent: ReactAgent[Any] = ReactAgent(model=FunctionModel(driver), toolsets=card.get_toolsets())
    try:
        yield agent, driver, card
    finally:
        agent.close()
        for name in (
            "AKGENTIC_TEST_PARENT_SECRET",
            "AKGENTIC_TEST_TOKEN_SOURCE",
            "AKGENTIC_TEST_CHILD_KEY",
            "AKGENTIC_MCP_ALLOWED_ENV",
        ):
            del os.environ[name]


def run(
    session: tuple[ReactAgent[Any], Driver, MCPTool], *calls: tuple[str, dict[str, Any]]
) -> Driver:
    agent, driver, _card = session
    driver.plan = list(calls)
    first_call = len(driver.seen)
    assert agent.run_sync("go") == "done"
    driver.run_start = len(driver.seen[first_call]) - 1  # from this run's prompt on
    return driver


def test_the_card_serves_only_a_toolset_and_spawns_nothing_before_a_run(
    server_script: Path,
) -> None:
    card = MCPTool(
        connection=MCPStdioConnectionConfig(
            stdio_command=sys.executable, stdio_args=[str(server_script)]
        )
    )
    assert card.get_tools() == []
    (toolset,) = card.get_toolsets()
    assert not getattr(toolset, "connected", True)


def test_the_model_calls_a_server_tool_and_gets_its_result(session: Any) -> None:
    driver = run(session, ("echo", {"text": "hi"}))
    (result,) = driver.last_returns()
    assert isinstance(result, ToolReturnPart)
    assert result.content == "echo:hi"


def test_malformed_and_reserved_names_are_not_offered_and_each_is_warned_once(
    session: Any, warnings: Warnings
) -> None:
    driver = run(session)
    run(session)
    offered = driver.offered[-1]
    assert offered == ["ask_client", "bloated", "boom", "echo", "huge", "read_env"]
    dropped = [r.getMessage() for r in warnings.records if "dropped" in r.getMessage()]
    assert len(dropped) == 3
    assert any("'bad name!'" in text for text in dropped)
    assert any("'final_result'" in text for text in dropped)
    assert any("'" + "n" * 100 + "'" in text for text in dropped)


def test_the_child_sees_a_safe_environment_with_its_token_only(session: Any) -> None:
    driver = run(
        session,
        ("read_env", {"name": "TEST_TOKEN"}),
        ("read_env", {"name": "AKGENTIC_TEST_PARENT_SECRET"}),
        ("read_env", {"name": "GREETING"}),
        ("read_env", {"name": "CHILD_KEY"}),
        ("read_env", {"name": "AKGENTIC_TEST_CHILD_KEY"}),
    )
    returns = [p.content for p in driver.last_returns()]
    assert returns == ["s3cret", "<unset>", "hello", "child-key", "<unset>"]


def test_the_token_never_appears_in_the_card_dump(session: Any) -> None:
    _agent, _driver, card = session
    assert "s3cret" not in card.model_dump_json()
    inline = MCPStdioConnectionConfig(
        stdio_command="x", bearer_token="inline-s3cret", stdio_token_env_var="T"
    )
    dumped = MCPTool(connection=inline).model_dump_json()
    assert "inline-s3cret" not in dumped
    reloaded = MCPTool.model_validate_json(dumped)
    assert isinstance(reloaded.connection, MCPStdioConnectionConfig)
    assert reloaded.connection.bearer_token is None  # a mask reads back as nothing


def test_stdio_env_values_are_masked_in_every_dump_and_named_variables_survive(
    session: Any, warnings: Warnings
) -> None:
    from akgentic_mcp.toolset import child_environment

    _agent, _driver, card = session
    dumped = card.model_dump_json()
    assert "inline-value" not in dumped and "hello" not in dumped
    assert card.model_dump(mode="json")["connection"]["stdio_env"] == {
        "GREETING": "**********",
        "INLINE_SECRET": "**********",
    }
    assert "child-key" not in dumped and "AKGENTIC_TEST_CHILD_KEY" in dumped
    assert "inline-value" not in repr(card) and "inline-value" not in str(card)
    reloaded = MCPTool.model_validate_json(dumped)
    assert isinstance(reloaded.connection, MCPStdioConnectionConfig)
    env = child_environment(reloaded.connection)
    assert env["CHILD_KEY"] == "child-key" and env["TEST_TOKEN"] == "s3cret"
    assert "GREETING" not in env and "INLINE_SECRET" not in env
    lost = [r.getMessage() for r in warnings.records if "not stored" in r.getMessage()]
    assert lost and "GREETING, INLINE_SECRET" in lost[-1] and "inline-value" not in lost[-1]


def test_a_huge_description_and_schema_are_cut_before_they_reach_the_model(
    session: Any, warnings: Warnings
) -> None:
    driver = run(session, ("bloated", {"text": "still callable"}))
    tool = driver.definitions["bloated"]
    assert tool.description.startswith("A tool whose description is two million characters.")
    assert len(tool.description) < 4_100
    assert "characters omitted]" in tool.description
    assert len(json.dumps(tool.parameters_json_schema)) < 1_000
    for other in driver.definitions.values():
        assert len(other.description or "") <= 4_100
        assert len(json.dumps(other.parameters_json_schema)) <= 20_000
    (result,) = driver.last_returns()
    assert isinstance(result, ToolReturnPart) and result.content == "bloated:still callable"
    cut = [r.getMessage() for r in warnings.records if "'bloated' cut" in r.getMessage()]
    assert len(cut) == 1 and "input schema of" in cut[0]


def test_a_huge_result_is_cut_with_a_marker(session: Any) -> None:
    driver = run(session, ("huge", {}))
    (result,) = driver.last_returns()
    assert isinstance(result, ToolReturnPart)
    assert isinstance(result.content, str)
    assert result.content == "x" * 100_000 + "[… truncated: 900000 characters omitted]"


def test_a_failing_server_tool_reaches_the_model_as_a_correctable_error(session: Any) -> None:
    driver = run(session, ("boom", {}))
    (result,) = driver.last_returns()
    # pydantic-ai sends a retry either as a retry prompt or as a return marked retried.
    assert isinstance(result, RetryPromptPart) or result.outcome == "retried"
    assert "the server tool broke" in str(result.content)


def test_server_initiated_sampling_is_refused(session: Any) -> None:
    driver = run(session, ("ask_client", {}))
    (result,) = driver.last_returns()
    text = str(result.content)
    assert text.startswith("refused: ")
    assert "AttributeError" not in text


def test_the_server_is_spawned_once_for_the_agents_life(session: Any) -> None:
    before = _children()
    run(session, ("echo", {"text": "a"}))
    run(session, ("echo", {"text": "b"}))
    assert _children() == before
    assert len(before) == 1


def _children() -> set[int]:
    """Python children of this process running the test server script."""
    found: set[int] = set()
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and b"server.py" in cmdline:
            found.add(int(entry.name))
    return found
