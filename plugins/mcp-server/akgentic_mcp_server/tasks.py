"""Long turns as MCP Tasks: the ``io.modelcontextprotocol/tasks`` extension (SEP-2663).

A client that declares the extension on a 2026-07-28 connection and calls ``ask`` or
``answer`` gets a task at once (``resultType: "task"``, its ``taskId`` the id of the
turn's root message) while the turn runs in the team. It then polls ``tasks/get``
(status, and the tool's result inline once completed), may wait with ``tasks/result``
(the tool's result, as the 2025-11-25 task spec names it), and may end the turn with
``tasks/cancel``, which sends ``/stop`` to the supervisors as the human, as typing it
in the chat does. A ``tasks/get`` or ``tasks/result`` that carries a progress token gets
the turn's messages since the last report as progress notifications (a task has no
request of its own to report on). Any other client gets the blocking tools.

The SDK (mcp 2.3) ships the extension mechanism (``Extension``: a ``tools/call``
interceptor and additive methods) and the client's ``ResultClaim``, but no task
store: this module is the store, and it is the team's event log. A task id is a
message id, so a task this process does not hold (the server restarted, or it was
evicted) is rebuilt from the stored events: the turn's messages by ``parent_id``,
``working`` while the team is busy, else ``completed``. One thing the log cannot say
is that a finished turn was cancelled: ``/stop`` is stamped with the human's own
parent, not the turn's, so after a restart a cancelled task reads ``completed`` (its
replies include the member's "stopped its run as asked").
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal
from uuid import UUID

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    Request,
    RequestParams,
    Result,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from akgentic_mcp_server.team import ServedTeam, Turn
from akgentic_mcp_server.turns import (
    DEFAULT_ASK_TIMEOUT,
    Timeout,
    blocking,
    progress_line,
    refusal,
    turn_result,
)

__all__ = [
    "TASKS_EXTENSION",
    "CancelTaskRequest",
    "CreateTaskResult",
    "GetTaskRequest",
    "GetTaskResult",
    "TaskParams",
    "TaskResultRequest",
    "TaskStatus",
    "TurnTasks",
]

logger = logging.getLogger("akgentic_mcp_server")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: How often a client should poll ``tasks/get`` (a hint, in the task).
POLL_INTERVAL_MS = 250
#: Seconds a worker thread waits for the team at a time, so a cancel or a shutdown
#: never waits behind a wait of the whole turn's length.
_WAIT_SLICE = 0.5
#: Finished tasks kept in memory; older ones are read back from the log.
_KEEP_FINISHED = 256
_TASK_TOOLS = ("ask", "answer")

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
_TERMINAL = ("completed", "failed", "cancelled")


# -- wire shapes (SEP-2663; camelCase through MCPModel's alias generator) -------------
class _TaskFields(Result):
    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    status_message: str | None = None
    poll_interval_ms: int | None = None


class CreateTaskResult(_TaskFields):
    """The answer to a task-augmented ``tools/call``: the task to poll."""

    result_type: Literal["task"] = "task"


class GetTaskResult(_TaskFields):
    """``tasks/get``: the task, with the tool's result once completed (``error`` if failed)."""

    result_type: Literal["complete"] = "complete"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(RequestParams):
    """The params of ``tasks/get``, ``tasks/result`` and ``tasks/cancel``."""

    task_id: str


class GetTaskRequest(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class TaskResultRequest(Request[TaskParams, Literal["tasks/result"]]):
    method: Literal["tasks/result"] = "tasks/result"
    params: TaskParams
    name_param = "taskId"


class CancelTaskRequest(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class _AskArguments(BaseModel):
    text: str
    timeout_s: Timeout = DEFAULT_ASK_TIMEOUT


class _AnswerArguments(_AskArguments):
    question_id: str


def _now() -> str:
    return datetime.now(UTC).isoformat()


class _Task:
    """One turn run as a task by this process: its status, progress lines and result."""

    def __init__(self) -> None:
        self.id = ""
        self.turn: Turn | None = None
        self.status: TaskStatus = "working"
        self.created_at = self.updated_at = _now()
        self.lines: list[str] = []
        self.reported = 0
        self.result: CallToolResult | None = None
        self.error: str | None = None
        self.runner: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    def add(self, row: dict[str, Any]) -> None:  # on the event loop
        self.lines.append(progress_line(row))
        self.updated_at = _now()
        self._wake()

    def end(self, status: TaskStatus) -> None:
        if self.status in _TERMINAL:
            return  # terminal statuses are final: a late completion never undoes a cancel
        self.status = status
        self.updated_at = _now()
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def changed(self) -> None:
        """Wait until a line is added or the task ends."""
        await self._changed.wait()

    def view(self, result_type: type[_TaskFields]) -> _TaskFields:
        last = self.lines[-1] if self.lines else None
        message = self.error if self.status == "failed" else last
        return result_type(
            task_id=self.id,
            status=self.status,
            created_at=self.created_at,
            last_updated_at=self.updated_at,
            status_message=message,
            poll_interval_ms=POLL_INTERVAL_MS,
        )


def _wire(model: _TaskFields) -> dict[str, Any]:
    # ``ttlMs`` is required and nullable: null says the task never expires, which
    # holds, since the log keeps every turn.
    return {**model.model_dump(by_alias=True, mode="json", exclude_none=True), "ttlMs": None}


def _not_found(task_id: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=f"no task {task_id!r} in this team")


def _error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class TurnTasks(Extension):
    """The tasks extension of one served team (see the module docstring)."""

    identifier = TASKS_EXTENSION

    def __init__(self, team: ServedTeam) -> None:
        self._team = team
        self._tasks: OrderedDict[str, _Task] = OrderedDict()

    def methods(self) -> Sequence[MethodBinding]:
        versions = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding("tasks/get", TaskParams, self._get, versions),
            MethodBinding("tasks/result", TaskParams, self._result, versions),
            MethodBinding("tasks/cancel", TaskParams, self._cancel, versions),
        ]

    # -- creating ------------------------------------------------------------------
    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        if params.name not in _TASK_TOOLS or not _declared(ctx):
            return await call_next(ctx)
        return await self._create(params.name, params.arguments or {})

    async def _create(self, tool: str, arguments: dict[str, Any]) -> HandlerResult:
        team = self._team
        task = _Task()
        loop = asyncio.get_running_loop()

        def on_message(row: dict[str, Any]) -> None:  # on the orchestrator's thread
            loop.call_soon_threadsafe(task.add, row)

        begin: Callable[[], Turn]
        try:
            if tool == "ask":
                args = _AskArguments.model_validate(arguments)
                begin = partial(team.ask, args.text, on_message)
            else:
                args = _AnswerArguments.model_validate(arguments)
                begin = partial(team.answer_turn, args.question_id, args.text, on_message)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"]) or "arguments"
            return _error_result(f"invalid arguments for {tool}: {where}: {problem['msg']}")
        try:
            turn = await blocking(begin)
        except Exception as exc:
            return _error_result(refusal(tool, exc))
        task.id, task.turn = str(turn.root), turn
        self._keep(task)
        task.runner = loop.create_task(self._follow(task, args.timeout_s))
        logger.info("mcp tool %s runs as task %s", tool, task.id)
        return _wire(task.view(CreateTaskResult))

    def _keep(self, task: _Task) -> None:
        self._tasks[task.id] = task
        finished = [key for key, kept in self._tasks.items() if kept.status in _TERMINAL]
        for key in finished[: max(0, len(finished) - _KEEP_FINISHED)]:
            del self._tasks[key]

    async def _follow(self, task: _Task, timeout: float) -> None:
        """Wait for the team to go idle (or ``timeout``), then complete the task."""
        team, turn = self._team, task.turn
        assert turn is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        finished = False
        try:
            while not finished and (left := deadline - loop.time()) > 0:
                finished = await blocking(partial(team.wait_idle, min(_WAIT_SLICE, left)))
        except Exception as exc:
            task.error = refusal("ask", exc)
            task.end("failed")
            return
        finally:
            team.unfollow(turn)
        task.result = turn_result(team, turn, finished)
        task.end("completed")

    # -- reading ---------------------------------------------------------------------
    async def _lookup(self, task_id: str) -> _Task:
        """The task this process holds, or one rebuilt from the team's stored events."""
        task = self._tasks.get(task_id)
        if task is not None:
            return task
        try:
            root = UUID(task_id)
        except ValueError:
            raise _not_found(task_id) from None
        try:
            turn = await blocking(partial(self._team.replay_turn, root))
            # The team's own wait: at once when idle, else at most a slice (the asks it
            # makes of the members cannot take a zero timeout).
            idle = turn is not None and await blocking(partial(self._team.wait_idle, _WAIT_SLICE))
        except Exception as exc:
            raise MCPError(code=INTERNAL_ERROR, message=refusal("tasks", exc)) from None
        if turn is None:
            raise _not_found(task_id)
        rebuilt = _Task()
        rebuilt.id, rebuilt.turn = task_id, turn
        rebuilt.lines = [progress_line(row) for row in turn.rows]
        rebuilt.reported = len(rebuilt.lines)  # told before, or never asked for
        if idle:
            rebuilt.result = turn_result(self._team, turn, True)
            rebuilt.status = "completed"
        return rebuilt

    async def _report(self, task: _Task, ctx: ServerRequestContext[Any, Any]) -> None:
        """Send the lines not reported yet, when this request asked for progress."""
        if ctx.meta is None or ctx.meta.get("progress_token") is None:
            return
        while task.reported < len(task.lines):
            task.reported += 1
            await ctx.session.report_progress(task.reported, None, task.lines[task.reported - 1])

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        task = await self._lookup(params.task_id)
        await self._report(task, ctx)
        view = task.view(GetTaskResult)
        assert isinstance(view, GetTaskResult)
        if task.status == "completed" and task.result is not None:
            view.result = task.result.model_dump(by_alias=True, mode="json", exclude_none=True)
        elif task.status == "failed":
            view.error = {"code": INTERNAL_ERROR, "message": task.error or "the turn failed"}
        return _wire(view)

    async def _result(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> HandlerResult:
        """Wait for the task to end, reporting progress meanwhile; the tool's result."""
        task = await self._lookup(params.task_id)
        while True:
            await self._report(task, ctx)
            if task.status in _TERMINAL or task.runner is None:
                break
            await task.changed()
        if task.status == "working":  # rebuilt from the log while the team still works
            return await self._wait_in_log(params.task_id)
        if task.status == "cancelled":
            raise MCPError(code=INVALID_PARAMS, message=f"task {task.id} was cancelled")
        if task.result is None:
            raise MCPError(code=INTERNAL_ERROR, message=task.error or "the turn failed")
        return task.result

    async def _wait_in_log(self, task_id: str) -> CallToolResult:
        while True:
            task = await self._lookup(task_id)
            if task.result is not None:
                return task.result
            await blocking(partial(self._team.wait_idle, _WAIT_SLICE))

    # -- cancelling ---------------------------------------------------------------------
    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> HandlerResult:
        task = await self._lookup(params.task_id)
        if task.status == "working":
            try:
                await blocking(self._team.stop_turn)
            except Exception as exc:
                raise MCPError(code=INTERNAL_ERROR, message=refusal("tasks/cancel", exc)) from None
            task.end("cancelled")
            logger.info("mcp task %s cancelled: /stop sent to the supervisors", task.id)
        return _wire(task.view(GetTaskResult))


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request comes from a client that takes tasks (modern protocol only)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return bool(
        capabilities and capabilities.extensions and TASKS_EXTENSION in capabilities.extensions
    )
