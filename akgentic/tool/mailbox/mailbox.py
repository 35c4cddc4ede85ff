"""``MailboxTool``: the agent's own inbox as a tool signal, and the ``/stop`` surface.

The card is deliberately thin. ``read_mailbox`` only acknowledges: the agent's run
loop sees the call, takes the named message out of the inbox and hands its content to
the model (see ``akgentic.agent``). ``/stop`` typed while the agent is idle has nothing
to cancel; typed while a run is in flight it never reaches the command registry, because
the run loop finds it in the inbox first and interrupts the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, TOOL_CALL
from akgentic.tool.core.params import BaseToolParam
from akgentic.tool.mailbox.params import ReadMailbox, Stop

__all__ = ["IDLE_STOP_REPLY", "READ_MAILBOX_TOOL", "MailboxTool"]

READ_MAILBOX_TOOL = "read_mailbox"
"""Name of the tool the run loop watches for."""

IDLE_STOP_REPLY = "There is no run to cancel."


class MailboxTool(ToolCard):
    """The agent's mailbox: ``read_mailbox`` for the model, ``/stop`` for people.

    Example YAML::

        tools:
          - card: mailbox
            read_mailbox: false   # keep /stop, drop the signal
    """

    read_mailbox: ReadMailbox | bool = True
    stop: Stop | bool = True

    def get_tools(self) -> list[Callable[..., Any]]:
        param = self._param(self.read_mailbox, ReadMailbox, TOOL_CALL)
        if param is None:
            return []

        def read_mailbox(message_id: str) -> str:
            """Take on, in this run, a message that arrived while you were working.

            Name one message by the id given in an arrival notice. Its content is added
            to this conversation right after this call, and it will NOT be delivered to
            you again as a separate turn, so handle it now. Messages you do not name stay
            queued and reach you after this run.

            Args:
                message_id: The id of the queued message, exactly as announced.
            """
            return f"Message {message_id.strip()} taken on; its content follows."

        return [param.apply_instructions(read_mailbox)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        param = self._param(self.stop, Stop, COMMAND)
        if param is None:
            return {}

        def stop() -> str:
            """Cancel the run this agent is working on (nothing happens when it is idle)."""
            return IDLE_STOP_REPLY

        return {Stop: param.apply_instructions(stop)}

    @property
    def signals_enabled(self) -> bool:
        """True when the model is offered ``read_mailbox`` (arrival notices make sense)."""
        return self._param(self.read_mailbox, ReadMailbox, TOOL_CALL) is not None
