"""Long turns as MCP Tasks (``io.modelcontextprotocol/tasks``), with the real SDK client.

A client that declares the extension gets a task from ``ask`` and follows it with
``tasks/get``, ``tasks/result`` and ``tasks/cancel``; one that does not gets the
blocking ``ask``. The echo team answers at once; the team whose model never answers
(the scripted server's ``hang``) is the long turn that ``tasks/cancel`` stops.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from akgentic_mcp_server.tasks import CreateTaskResult
from akgentic_mcp_server.testing import SyncClient, child_env, stdio_session
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult

from akgentic.llm.scripted_server import ScriptedLLMServer, hang
from akgentic.testing.waiting import wait_until

Serve = Callable[..., AbstractContextManager[SyncClient]]

HUNG_CARD = """\
name: hung-team
description: A lead whose model never answers
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The person talking to the team
    config: {{name: "@Human", role: Human}}
members:
  - card:
      agent_class: akgentic.agent.BaseAgent
      description: Works on what the human asks
      config:
        name: "@Lead"
        role: Lead
        prompt: {{template: You lead the team.}}
        model_cfg: {{provider: openai-chat, model: {model}, base_url: '{url}', api_key: scripted}}
message_types: [akgentic.agent.AgentMessage]
"""


class Progress:
    """A progress callback that keeps the messages it was given."""

    def __init__(self) -> None:
        self.messages: list[str | None] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.messages.append(message)


def _task(started: CreateTaskResult | CallToolResult) -> CreateTaskResult:
    assert isinstance(started, CreateTaskResult), started
    return started


def _finished(client: SyncClient, task_id: str, progress: Progress) -> Any:
    """Poll ``tasks/get`` (asking for progress) until the task is no longer working."""
    seen: list[Any] = []

    def done() -> bool:
        seen.append(client.get_task(task_id, progress))
        return bool(seen[-1].status != "working")

    wait_until(done, timeout=60)
    return seen[-1]


def _texts(rows: list[dict[str, Any]]) -> list[str]:
    return [row["content"] for row in rows]


def test_ask_runs_as_a_task_with_progress_and_its_result_over_stdio(serve_stdio: Serve) -> None:
    progress = Progress()
    with serve_stdio(tasks=True) as client:
        task = _task(client.start_task("ask", {"text": "hello"}))
        assert task.status == "working" and task.poll_interval_ms == 250
        [asked] = client.read("akgentic://team/conversation")[:1]
        assert task.task_id == asked["id"]  # the id of the message the human sent

        got = _finished(client, task.task_id, progress)
        assert got.status == "completed"
        assert got.result is not None and got.result["structuredContent"]["finished"] is True
        assert got.result["content"][0]["text"] == "Echo: hello"
        wait_until(lambda: progress.messages == ["@Replier → @Human: Echo: hello"])

        result = client.task_result(task.task_id)
        assert client.text(result) == "Echo: hello" and not result.is_error
        assert client.get_task(task.task_id).status == "completed"


def test_call_tool_of_a_tasks_client_polls_the_task_into_the_tools_result(
    serve_stdio: Serve,
) -> None:
    with serve_stdio(tasks=True) as client:
        result = client.call("ask", {"text": "through a task"})
        assert client.text(result) == "Echo: through a task"
        assert result.structured_content is not None
        assert result.structured_content["finished"] is True


def test_tasks_result_waits_for_the_turn_and_reports_its_progress(serve_stdio: Serve) -> None:
    progress = Progress()
    with serve_stdio(tasks=True) as client:
        task = _task(client.start_task("ask", {"text": "ask me about the report"}))
        result = client.task_result(task.task_id, progress)
        assert client.text(result).startswith("Which colour should the report be?")
        wait_until(lambda: len(progress.messages) == 1)
        assert progress.messages[0] is not None
        assert progress.messages[0].startswith("@Replier → @Human: Which colour")

        status = client.call("status").structured_content
        assert status is not None
        [question] = status["pending_questions"]
        answer = _task(client.start_task("answer", {"question_id": question["id"], "text": "blue"}))
        assert answer.task_id == question["id"]
        assert client.text(client.task_result(answer.task_id)) == "Noted: blue"


def test_any_turn_of_the_human_is_a_task_read_from_the_log(serve_stdio: Serve) -> None:
    with serve_stdio(tasks=True) as client:
        sent = client.call("send", {"text": "sent, not asked"}).structured_content
        assert sent is not None
        got = _finished(client, sent["message_id"], Progress())
        assert got.status == "completed" and got.task_id == sent["message_id"]
        assert got.result is not None
        assert got.result["content"][0]["text"] == "Echo: sent, not asked"


def test_a_refused_ask_is_a_tool_error_and_no_task(serve_stdio: Serve) -> None:
    with serve_stdio(tasks=True) as client:
        refused = client.start_task("ask", {"text": "x" * (64 * 1024 + 1)})
        assert isinstance(refused, CallToolResult) and refused.is_error
        assert "the message is 65537 bytes" in client.text(refused)
        bad = client.start_task("ask", {"text": "hi", "timeout_s": 0})
        assert isinstance(bad, CallToolResult) and bad.is_error
        assert "invalid arguments for ask: timeout_s" in client.text(bad)


def test_an_unknown_task_id_is_a_protocol_error(serve_stdio: Serve) -> None:
    missing = str(uuid.uuid4())
    with serve_stdio(tasks=True) as client:
        for task_id in (missing, "not-a-task"):
            for call in (client.get_task, client.task_result, client.cancel_task):
                with pytest.raises(MCPError) as raised:
                    call(task_id)
                assert raised.value.code == INVALID_PARAMS
                assert raised.value.message == f"no task {task_id!r} in this team"
        assert client.text(client.call("ask", {"text": "still here"})) == "Echo: still here"


def test_a_client_without_tasks_gets_the_blocking_ask(serve_stdio: Serve) -> None:
    with serve_stdio() as client:
        started = client.start_task("ask", {"text": "no tasks here"})
        assert isinstance(started, CallToolResult)
        assert client.text(started) == "Echo: no tasks here"


@pytest.fixture
def hung_model() -> Iterator[ScriptedLLMServer]:
    """A model server that accepts every request and never answers it."""
    with ScriptedLLMServer(fallback=hang()) as server:
        yield server


def test_cancel_stops_the_turn_as_the_chats_stop_does(
    tmp_path: Path, errlog: Path, hung_model: ScriptedLLMServer
) -> None:
    card = tmp_path / "hung-team.yaml"
    card.write_text(HUNG_CARD.format(model=hung_model.model, url=hung_model.base_url))
    store = f"sqlite:///{tmp_path}/hung.db"
    with stdio_session(str(card), store, tmp_path, errlog, tasks=True) as client:
        task = _task(client.start_task("ask", {"text": "Work on it.", "timeout_s": 600}))
        wait_until(lambda: len(hung_model.requests) == 1, timeout=60)
        assert client.get_task(task.task_id).status == "working"

        cancelled = client.cancel_task(task.task_id)
        assert cancelled.status == "cancelled"
        stopped = "@Lead stopped its run as asked."
        wait_until(lambda: stopped in _texts(client.read("akgentic://team/conversation")))
        assert client.get_task(task.task_id).status == "cancelled"
        assert client.cancel_task(task.task_id).status == "cancelled"  # terminal: stays
        with pytest.raises(MCPError, match="was cancelled"):
            client.task_result(task.task_id)
    assert len(hung_model.requests) == 1


def test_tasks_over_streamable_http_survive_a_restart(serve_http: Serve) -> None:
    progress = Progress()
    with serve_http(tasks=True) as client:
        task = _task(client.start_task("ask", {"text": "over http"}))
        got = _finished(client, task.task_id, progress)
        assert got.status == "completed"
        assert got.result is not None and got.result["content"][0]["text"] == "Echo: over http"
        wait_until(lambda: progress.messages == ["@Replier → @Human: Echo: over http"])
        status = client.call("status").structured_content
        assert status is not None

    with serve_http(status["team_id"], tasks=True) as client:
        again = client.get_task(task.task_id)  # read back from the team's stored events
        assert again.status == "completed" and again.task_id == task.task_id
        assert again.result is not None and again.result["content"][0]["text"] == "Echo: over http"
        assert client.text(client.task_result(task.task_id)) == "Echo: over http"
        with pytest.raises(MCPError) as raised:
            client.get_task(str(uuid.uuid4()))
        assert raised.value.code == INVALID_PARAMS


def test_the_example_client_runs_ask_as_a_task(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[3] / "examples" / "mcp_client.py"
    result = subprocess.run(
        [sys.executable, str(script), "--task", f"sqlite:///{tmp_path}/example.db"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, **child_env()},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Echo: Hello from MCP!\n"
    assert "progress 1: @Replier → @Human: Echo: Hello from MCP!" in result.stderr
