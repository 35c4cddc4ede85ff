"""The client half of the tasks extension, on the ``mcp`` SDK's ``ClientExtension``.

``Client(server, extensions=[TasksClient()])`` declares ``io.modelcontextprotocol/tasks``,
so ``ask`` and ``answer`` run as tasks; ``call_tool`` still returns the tool's result
(the claim below polls ``tasks/get`` until the task ends). To hold the task yourself,
call ``client.session.call_tool(..., allow_claimed=True)`` (a :class:`CreateTaskResult`)
and use :func:`get_task`, :func:`task_result` and :func:`cancel_task`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import CallToolResult, TextContent

from akgentic_mcp_server.tasks import (
    TASKS_EXTENSION,
    CancelTaskRequest,
    CreateTaskResult,
    GetTaskRequest,
    GetTaskResult,
    TaskParams,
    TaskResultRequest,
)

__all__ = ["TasksClient", "cancel_task", "get_task", "task_result"]

#: Floor of the poll interval (seconds), whatever the server advises.
_MIN_POLL = 0.02


async def get_task(
    session: ClientSession, task_id: str, progress: ProgressFnT | None = None
) -> GetTaskResult:
    """``tasks/get``; ``progress`` receives the turn's messages since the last report."""
    request = GetTaskRequest(params=TaskParams(task_id=task_id))
    return await session.send_request(request, GetTaskResult, progress_callback=progress)


async def task_result(
    session: ClientSession, task_id: str, progress: ProgressFnT | None = None
) -> CallToolResult:
    """``tasks/result``: wait for the task to end and return the tool's result."""
    request = TaskResultRequest(params=TaskParams(task_id=task_id))
    return await session.send_request(request, CallToolResult, progress_callback=progress)


async def cancel_task(session: ClientSession, task_id: str) -> GetTaskResult:
    """``tasks/cancel``: stop the turn; the task as it is after the cancel."""
    request = CancelTaskRequest(params=TaskParams(task_id=task_id))
    return await session.send_request(request, GetTaskResult)


async def _poll(created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
    """Poll ``tasks/get`` from ``created`` until the task ends; the tool's result."""
    delay = _MIN_POLL
    ceiling = max((created.poll_interval_ms or 1000) / 1000, _MIN_POLL)
    while True:
        task = await get_task(ctx.session, created.task_id)
        if task.status == "completed" and task.result is not None:
            return CallToolResult.model_validate(task.result, by_name=False)
        if task.status in ("completed", "failed", "cancelled"):
            reason: Any = (task.error or {}).get("message") or task.status_message
            text = f"task {task.task_id} {task.status}" + (f": {reason}" if reason else "")
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        await anyio.sleep(delay)
        delay = min(delay * 2, ceiling)


class TasksClient(ClientExtension):
    """Declares the tasks extension and resolves a task into the tool's result."""

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=_poll)]
