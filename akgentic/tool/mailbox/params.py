"""Params of :class:`~akgentic.tool.mailbox.mailbox.MailboxTool`."""

from __future__ import annotations

from pydantic import Field

from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam

__all__ = ["ReadMailbox", "Stop"]


class ReadMailbox(BaseToolParam):
    """The ``read_mailbox(message_id)`` signal the model calls to absorb a queued message."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL})


class Stop(BaseToolParam):
    """The ``/stop`` command: cancels the run in progress (enforced by the agent)."""

    expose: set[Channels] = Field(default_factory=lambda: {COMMAND})
