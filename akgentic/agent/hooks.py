"""The run hooks every BaseAgent mounts on its ReactAgent.

This module imports pydantic-ai; the agent loads it in ``on_start`` only.

- :class:`MailboxHook` looks at the inbox before every model request: a queued
  ``/stop`` (or :class:`~akgentic.core.messages.CancelMessage`) from someone the agent
  takes commands from ends the run with
  :class:`~akgentic.tool.mailbox.RunInterruptedError`; other new mail (an agent's
  ``/stop`` line included, which is only text) is announced to
  the model once per run, and a ``read_mailbox(message_id)`` call takes the named
  message out of the inbox and puts its content into the run.
- :class:`RecipientCheckHook` refuses a structured output whose recipients cannot
  be reached, with a correction the model can act on, instead of dropping messages.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai import ModelRetry

from akgentic.agent.output_models import StructuredOutput
from akgentic.core.messages.message import CancelMessage, Message
from akgentic.llm.run_hooks import RunHook, RunView
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

    from akgentic.agent.agent import BaseAgent

__all__ = ["MailboxHook", "RecipientCheckHook", "arrival_notice", "is_cancel"]

logger = logging.getLogger(__name__)

_RUNS_REMEMBERED = 8
"""Runs whose announcements a MailboxHook keeps (one agent runs one at a time)."""


def arrival_notice(messages: list[MailboxMessage], closing: str = ARRIVAL_CLOSING) -> str:
    """The note telling the model which messages arrived while it worked."""
    lines = ["New messages arrived while you were working:"]
    lines += [f"- id {m.id}: {m.rendering_preview()}" for m in messages]
    return "\n".join([*lines, closing])


def is_cancel(agent: BaseAgent, message: Message) -> bool:
    """Whether ``message`` may end ``agent``'s run: same sender rule as any slash command.

    A CancelMessage without a sender was told by code holding the actor itself (the
    host program), not sent by a member, so it counts as the operator's.
    """
    if isinstance(message, CancelMessage):
        return message.sender is None or agent.accepts_commands_from(message.sender)
    return is_stop_request(message) and agent.accepts_commands_from(message.sender)


class MailboxHook(RunHook):
    """Cancellation, arrival notices and absorption of queued mail during a run.

    Args:
        announce: Whether new mail is announced (off when the agent's MailboxTool has no
            ``read_mailbox`` signal: the model could not act on the notice).
        absorbed_prefix: Heads the content of an absorbed message.
        arrival_closing: Closes an arrival notice; keep its promise (named messages are
            taken on now and never come back; the rest waits) when overriding it.
    """

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
        self._announced: dict[str, set[Any]] = {}

    # One hook serves every run of its agent, so announcements are kept by run id.
    def _announced_in(self, view: RunView) -> set[Any]:
        seen = self._announced.get(view.run_id)
        if seen is None:
            while len(self._announced) >= _RUNS_REMEMBERED:  # runs that have ended
                del self._announced[next(iter(self._announced))]
            seen = self._announced[view.run_id] = set()
        return seen

    async def before_model_request(self, view: RunView) -> None:
        agent = cast("BaseAgent", view.deps)
        queued = agent.get_mailbox()
        if not queued:
            return
        cancels = [m for m in queued if is_cancel(agent, m)]
        if cancels:
            agent.consume_mailbox([m.id for m in cancels])
            raise RunInterruptedError(f"{agent.config.name}: run cancelled")
        if self.announce:
            announced = self._announced_in(view)
            fresh = [m for m in queued if isinstance(m, MailboxMessage) and m.id not in announced]
            if fresh:
                announced.update(m.id for m in fresh)
                view.enqueue(arrival_notice(fresh, self.arrival_closing))

    async def after_tool_call(
        self, view: RunView, call: ToolCallPart, args: dict[str, Any], result: Any
    ) -> Any:
        if call.tool_name != READ_MAILBOX_TOOL:
            return result
        agent = cast("BaseAgent", view.deps)
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
            view.enqueue(f"{self.absorbed_prefix}\n\n{message.rendering()}")
        return result


class RecipientCheckHook(RunHook):
    """Sends the model back to fix recipients nobody can reach, while it still can retry."""

    async def after_output(self, view: RunView, output: Any) -> Any:
        if not isinstance(output, StructuredOutput) or not output.messages:
            return output
        if view.output_retries >= view.max_output_retries:
            return output  # no retry left: routing skips what it cannot deliver
        agent = cast("BaseAgent", view.deps)
        unreachable, directory = agent.unreachable_recipients(
            [r.recipient for r in output.messages]
        )
        if unreachable:
            raise ModelRetry(directory.correction(unreachable))
        return output
