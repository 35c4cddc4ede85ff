"""The run-loop capabilities every BaseAgent mounts on its ReactAgent.

This module imports pydantic-ai; the agent loads it in ``on_start`` only.

- :class:`MailboxCapability` looks at the inbox before every model request: a queued
  ``/stop`` (or :class:`~akgentic.core.messages.CancelMessage`) ends the run with
  :class:`~akgentic.tool.mailbox.RunInterruptedError`; other new mail is announced to
  the model once per run, and a ``read_mailbox(message_id)`` call takes the named
  message out of the inbox and puts its content into the run.
- :class:`RecipientCheckCapability` refuses a structured output whose recipients cannot
  be reached, with a correction the model can act on, instead of dropping messages.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai import ModelRetry
from pydantic_ai.capabilities import AbstractCapability

from akgentic.agent.output_models import StructuredOutput
from akgentic.core.messages.message import CancelMessage, Message
from akgentic.tool.mailbox import (
    ABSORBED_PREFIX,
    ARRIVAL_CLOSING,
    READ_MAILBOX_TOOL,
    MailboxMessage,
    RunInterruptedError,
    is_stop_request,
)

if TYPE_CHECKING:
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.output import OutputContext
    from pydantic_ai.tools import RunContext, ToolDefinition

    from akgentic.agent.agent import BaseAgent

__all__ = ["MailboxCapability", "RecipientCheckCapability", "arrival_notice"]

logger = logging.getLogger(__name__)

_RUNS_REMEMBERED = 8
"""Runs whose announcements a MailboxCapability keeps (one agent runs one at a time)."""


def arrival_notice(messages: list[MailboxMessage], closing: str = ARRIVAL_CLOSING) -> str:
    """The note telling the model which messages arrived while it worked."""
    lines = ["New messages arrived while you were working:"]
    lines += [f"- id {m.id}: {m.rendering_preview()}" for m in messages]
    return "\n".join([*lines, closing])


def _is_cancel(message: Message) -> bool:
    return isinstance(message, CancelMessage) or is_stop_request(message)


@dataclass(init=False)
class MailboxCapability(AbstractCapability[Any]):
    """Cancellation, arrival notices and absorption of queued mail during a run.

    Args:
        announce: Whether new mail is announced (off when the agent's MailboxTool has no
            ``read_mailbox`` signal: the model could not act on the notice).
        absorbed_prefix: Heads the content of an absorbed message.
        arrival_closing: Closes an arrival notice; keep its promise (named messages are
            taken on now and never come back; the rest waits) when overriding it.
    """

    announce: bool
    absorbed_prefix: str
    arrival_closing: str
    _announced: dict[Any, set[Any]] = field(default_factory=dict)

    def __init__(
        self,
        announce: bool = True,
        *,
        absorbed_prefix: str = ABSORBED_PREFIX,
        arrival_closing: str = ARRIVAL_CLOSING,
    ) -> None:
        self.announce = announce
        self.absorbed_prefix = absorbed_prefix
        self.arrival_closing = arrival_closing
        self._announced = {}

    # Announcements are per run. They are kept by run id instead of in a fresh copy
    # per run (``for_run``): a capability that changes for a run makes pydantic-ai
    # rebuild the agent's whole capability stack for that run, which costs more than
    # everything this capability does.
    def _announced_in(self, ctx: RunContext[Any]) -> set[Any]:
        seen = self._announced.get(ctx.run_id)
        if seen is None:
            while len(self._announced) >= _RUNS_REMEMBERED:  # runs that have ended
                del self._announced[next(iter(self._announced))]
            seen = self._announced[ctx.run_id] = set()
        return seen

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        agent = cast("BaseAgent", ctx.deps)
        queued = agent.get_mailbox()
        if not queued:
            return request_context
        cancels = [m for m in queued if _is_cancel(m)]
        if cancels:
            agent.consume_mailbox([m.id for m in cancels])
            raise RunInterruptedError(f"{agent.config.name}: run cancelled")
        if self.announce:
            announced = self._announced_in(ctx)
            fresh = [m for m in queued if isinstance(m, MailboxMessage) and m.id not in announced]
            if fresh:
                announced.update(m.id for m in fresh)
                ctx.enqueue(arrival_notice(fresh, self.arrival_closing))
        return request_context

    async def after_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        result: Any,
    ) -> Any:
        if call.tool_name != READ_MAILBOX_TOOL:
            return result
        agent = cast("BaseAgent", ctx.deps)
        wanted = str(args.get("message_id", "") if isinstance(args, dict) else "").strip()
        try:
            taken = agent.consume_mailbox([wanted])
        except ValueError:  # not a UUID at all
            taken = []
        absorbed = [m for m in taken if isinstance(m, MailboxMessage)]
        if not absorbed:
            return (
                f"No queued message has the id {wanted!r}: it was already delivered, or the id "
                "is wrong. Nothing was taken on."
            )
        for message in absorbed:
            ctx.enqueue(f"{self.absorbed_prefix}\n\n{message.rendering()}")
        return result


@dataclass(init=False)
class RecipientCheckCapability(AbstractCapability[Any]):
    """Sends the model back to fix recipients nobody can reach, while it still can retry."""

    def __init__(self) -> None:
        pass

    async def after_output_validate(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
    ) -> Any:
        if not isinstance(output, StructuredOutput) or not output.messages:
            return output
        if ctx.max_retries is not None and ctx.retry >= ctx.max_retries:
            return output  # no retry left: routing skips what it cannot deliver
        agent = cast("BaseAgent", ctx.deps)
        unreachable, directory = agent.unreachable_recipients(
            [r.recipient for r in output.messages]
        )
        if unreachable:
            raise ModelRetry(directory.correction(unreachable))
        return output
