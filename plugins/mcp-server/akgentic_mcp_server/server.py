"""The MCP face of a :class:`~akgentic_mcp_server.team.ServedTeam`, on the official ``mcp`` SDK.

Tools: ``ask`` (send as the human, wait for the turn to end, return what came back to
the human; progress notifications while it runs), ``send`` (fire and forget),
``status`` and ``answer`` (reply to a question an agent asked the human, then wait
like ``ask``). Resources: ``akgentic://team/conversation`` and
``akgentic://team/members``, both JSON read from the team's event log. For a client
that declares the MCP tasks extension, ``ask`` and ``answer`` run as tasks instead
(:mod:`akgentic_mcp_server.tasks`).

The SDK speaks the protocol (stdio or streamable HTTP); nothing here writes JSON-RPC.
Team calls block, so they run on worker threads; the event loop only waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent

from akgentic_mcp_server.tasks import TurnTasks
from akgentic_mcp_server.team import MAX_MESSAGE_BYTES, RequestError, ServedTeam, Turn
from akgentic_mcp_server.turns import (
    CONVERSATION_URI,
    DEFAULT_ASK_TIMEOUT,
    Timeout,
    blocking,
    progress_line,
    refusal,
    turn_result,
)

__all__ = [
    "CONVERSATION_URI",
    "DEFAULT_ASK_TIMEOUT",
    "MEMBERS_URI",
    "build_server",
    "parse_http",
    "serve",
]

logger = logging.getLogger("akgentic_mcp_server")

MEMBERS_URI = "akgentic://team/members"


def _refuse(tool: str, exc: Exception) -> ToolError:
    """One log line and the tool error the client reads (one line, no traceback)."""
    return ToolError(refusal(tool, exc))


async def _follow_turn(
    team: ServedTeam,
    begin: Callable[[Callable[[dict[str, Any]], None]], Turn],
    ctx: Context[Any, Any],
    timeout: float,
) -> CallToolResult:
    """Run the turn ``begin`` starts (it gets the turn's message callback) until the team is idle.

    Each message of the turn is reported as a progress notification (when the client
    asked for progress); the result holds the turn's messages to the human. Beginning
    and waiting share one worker thread: a thread hop is a good part of what MCP adds.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def on_message(row: dict[str, Any]) -> None:  # on the orchestrator's thread
        loop.call_soon_threadsafe(queue.put_nowait, row)

    def run() -> tuple[Turn, bool]:
        turn = begin(on_message)
        try:
            return turn, team.wait_idle(timeout)
        finally:
            team.unfollow(turn)

    reported = 0

    async def report(row: dict[str, Any]) -> None:
        nonlocal reported
        reported += 1
        await ctx.report_progress(reported, None, progress_line(row))

    running: asyncio.Future[tuple[Turn, bool]] = asyncio.ensure_future(blocking(run))
    while not running.done():
        getter: asyncio.Future[dict[str, Any]] = asyncio.ensure_future(queue.get())
        either: list[asyncio.Future[Any]] = [running, getter]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            await report(getter.result())
        else:
            getter.cancel()
    turn, finished = running.result()
    while not queue.empty():
        await report(queue.get_nowait())
    return turn_result(team, turn, finished)


def _json_result(value: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(value, indent=2))],
        structured_content=value,
    )


def build_server(team: ServedTeam) -> MCPServer[Any]:
    """An ``MCPServer`` whose tools and resources act on ``team`` (see the module docstring)."""
    server: MCPServer[Any] = MCPServer(
        name="akgentic",
        instructions=(
            "One akgentic agent team, and you are its human. `ask` sends a message to the "
            "team's supervisors and returns their replies; `send` only delivers it; `status` "
            "shows the members and the questions agents asked you; `answer` replies to one."
        ),
        version=_version(),
        log_level="WARNING",
        extensions=[TurnTasks(team)],
    )
    limit = f"At most {MAX_MESSAGE_BYTES // 1024} KiB of text."

    @server.tool(
        name="ask",
        description=(
            "Send a message to the team's supervisors as the human, wait until the team has "
            "finished the turn, and return what it wrote to the human. " + limit
        ),
    )
    async def ask(
        text: str, ctx: Context[Any, Any], timeout_s: Timeout = DEFAULT_ASK_TIMEOUT
    ) -> CallToolResult:
        try:
            return await _follow_turn(team, partial(team.ask, text), ctx, timeout_s)
        except Exception as exc:
            raise _refuse("ask", exc) from None

    @server.tool(
        name="send",
        description=(
            "Send a message to the team's supervisors as the human and return at once; "
            f"the replies appear in {CONVERSATION_URI}. " + limit
        ),
    )
    async def send(text: str) -> CallToolResult:
        try:
            message = await blocking(partial(team.send_text, text))
        except Exception as exc:
            raise _refuse("send", exc) from None
        return _json_result({"sent": True, "message_id": str(message.id)})

    @server.tool(
        name="status",
        description=(
            "The team's id, name, whether it runs, its members and the questions its "
            "agents asked the human that are not answered yet."
        ),
    )
    async def status() -> CallToolResult:
        try:
            return _json_result(await blocking(team.status))
        except Exception as exc:
            raise _refuse("status", exc) from None

    @server.tool(
        name="answer",
        description=(
            "Answer a question an agent asked the human (its id is in `status` or in the "
            "reply of `ask`), then wait for the team like `ask` and return its replies. " + limit
        ),
    )
    async def answer(
        question_id: str,
        text: str,
        ctx: Context[Any, Any],
        timeout_s: Timeout = DEFAULT_ASK_TIMEOUT,
    ) -> CallToolResult:
        try:
            return await _follow_turn(
                team, partial(team.answer_turn, question_id, text), ctx, timeout_s
            )
        except Exception as exc:
            raise _refuse("answer", exc) from None

    @server.resource(
        CONVERSATION_URI,
        name="conversation",
        description="Every message the human sent to the team or received from it, oldest "
        "first (JSON rows: seq, id, parent_id, time, from, to, intent, content).",
        mime_type="application/json",
    )
    async def conversation() -> str:
        return await _read("conversation", team.conversation)

    @server.resource(
        MEMBERS_URI,
        name="members",
        description="The team's members (JSON rows: name, role, agent_id, model, human, "
        "token usage).",
        mime_type="application/json",
    )
    async def members() -> str:
        return await _read("members", team.members)

    return server


async def _read(name: str, read: Callable[[], list[dict[str, Any]]]) -> str:
    try:
        rows = await blocking(read)
    except Exception as exc:
        text = str(exc) if isinstance(exc, RequestError) else " ".join(str(exc).split())
        logger.warning("mcp resource %s refused: %s", name, text)
        raise ResourceError(text) from None
    return json.dumps(rows, indent=2)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("akgentic-mcp-server")
    except PackageNotFoundError:  # run from a source tree
        return "0"


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` as a pair (``ValueError`` with the reason when it is not one)."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{value!r} is not HOST:PORT (for example 127.0.0.1:8765)")
    return host, int(port)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # SIGTERM ends the server as Ctrl+C does: the team is stopped and recorded, and
    # ``akgentic team stop ID`` (which sends it) works on a served team.
    raise KeyboardInterrupt


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    # Over stdio, stdout is the protocol: a stray print while the team starts or
    # stops must not land there. (While serving, the SDK diverts the descriptor.)
    with contextlib.redirect_stdout(sys.stderr):
        yield


def serve(
    target: str,
    store: str | None = None,
    http: tuple[str, int] | None = None,
    paths: list[Path] | None = None,
) -> None:
    """Serve the team ``target`` (card file or stored id) until stdin closes or SIGTERM."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    logger.setLevel(logging.INFO)
    # SIGINT too: a server started in the background by a script inherits it ignored.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with _stdout_to_stderr():
            team = ServedTeam.open(target, store, paths)
        try:
            server = build_server(team)
            if team.error is None:
                where = "stdio" if http is None else f"http://{http[0]}:{http[1]}/mcp"
                logger.info("serving team %s over %s", team.team_id, where)
            run: Callable[[], Awaitable[None]]
            if http is None:
                run = server.run_stdio_async
            else:
                run = partial(server.run_streamable_http_async, host=http[0], port=http[1])
            anyio.run(run)
        except KeyboardInterrupt:
            pass
        finally:
            with _stdout_to_stderr():
                team.close()
            if team.team_id is not None and team.error is None:
                logger.info("team %s stopped; serve it again to resume it", team.team_id)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
