"""A turn as MCP shows it: its progress lines, its result, a refusal, a blocking call.

Shared by the blocking tools (:mod:`akgentic_mcp_server.server`) and the tasks that run
the same tools in the background (:mod:`akgentic_mcp_server.tasks`), so a turn reads
the same whichever way the client called.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from akgentic_mcp_server.team import RequestError, ServedTeam, Turn

__all__ = [
    "CONVERSATION_URI",
    "DEFAULT_ASK_TIMEOUT",
    "Timeout",
    "blocking",
    "progress_line",
    "refusal",
    "reply_text",
    "turn_result",
]

logger = logging.getLogger("akgentic_mcp_server")

CONVERSATION_URI = "akgentic://team/conversation"
#: Seconds ``ask`` and ``answer`` wait for the turn to end, unless told otherwise.
DEFAULT_ASK_TIMEOUT = 120.0
#: Characters of a message shown in one progress notification.
_PROGRESS_CHARS = 200

_T = TypeVar("_T")

Timeout = Annotated[
    float,
    Field(
        ge=0.1,
        le=3600,
        description="Seconds to wait for the team to finish the turn (default 120).",
    ),
]


async def blocking(call: Callable[[], _T]) -> _T:
    """Run a blocking team call on a worker thread; the event loop only waits."""
    return await anyio.to_thread.run_sync(call)


def refusal(tool: str, exc: Exception) -> str:
    """The one line a client reads when ``tool`` failed (logged once, never a traceback)."""
    if isinstance(exc, RequestError):
        text = str(exc)
    else:
        text = f"the team could not take it: {' '.join(str(exc).split()) or type(exc).__name__}"
        logger.debug("tool %s failed", tool, exc_info=exc)
    logger.warning("mcp tool %s refused: %s", tool, text)
    return text


def progress_line(row: dict[str, Any]) -> str:
    """One message of a turn as a progress notification's text."""
    content = " ".join(str(row.get("content") or "").split())
    if len(content) > _PROGRESS_CHARS:
        content = content[:_PROGRESS_CHARS] + "…"
    return f"{row.get('from')} → {row.get('to')}: {content}"


def reply_text(replies: list[dict[str, Any]], finished: bool) -> str:
    """The replies as the text a person (or a model) reads."""
    if not replies:
        if finished:
            return "(the team finished the turn without writing to the human)"
        return (
            "(no reply yet: the team is still working; read "
            f"{CONVERSATION_URI} or call status later)"
        )
    senders = {row["from"] for row in replies}
    parts = []
    for row in replies:
        text = row["content"] or ""
        if len(senders) > 1:
            text = f"{row['from']}: {text}"
        if row.get("intent") == "request":
            text += f"\n(question {row['id']}: reply with the answer tool)"
        parts.append(text)
    if not finished:
        parts.append("(the team is still working; more may come in the conversation)")
    return "\n\n".join(parts)


def turn_result(team: ServedTeam, turn: Turn, finished: bool) -> CallToolResult:
    """What ``ask`` and ``answer`` return: the turn's messages to the human."""
    replies = list(turn.replies)
    return CallToolResult(
        content=[TextContent(type="text", text=reply_text(replies, finished))],
        structured_content={
            "team_id": str(team.team_id),
            "finished": finished,
            "replies": replies,
        },
    )
