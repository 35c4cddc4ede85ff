"""The agent's own mailbox: MailboxTool, what may be absorbed mid-run, and its contract.

``MailboxTool`` offers ``read_mailbox`` (a signal the model calls to take on a queued
message in the current run) and ``/stop`` (cancel a run in flight). The enforcement of
both lives in the agent layer; this package holds the card, the
:class:`MailboxMessage` base class, the announcement wording and the observer protocol.
"""

from akgentic.tool.mailbox.mailbox import IDLE_STOP_REPLY, READ_MAILBOX_TOOL, MailboxTool
from akgentic.tool.mailbox.messages import (
    ABSORBED_PREFIX,
    ARRIVAL_CLOSING,
    STOP_COMMAND,
    MailboxMessage,
    RunInterruptedError,
    is_stop_request,
)
from akgentic.tool.mailbox.observer import MailboxToolObserver
from akgentic.tool.mailbox.params import ReadMailbox, Stop

__all__ = [
    "ABSORBED_PREFIX",
    "ARRIVAL_CLOSING",
    "IDLE_STOP_REPLY",
    "READ_MAILBOX_TOOL",
    "STOP_COMMAND",
    "MailboxMessage",
    "MailboxTool",
    "MailboxToolObserver",
    "ReadMailbox",
    "RunInterruptedError",
    "Stop",
    "is_stop_request",
]
