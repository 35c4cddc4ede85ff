"""The agent's own mailbox: the contract the MailboxTool card needs from its agent."""

from akgentic.tool.mailbox.observer import MailboxToolObserver

__all__ = ["MailboxToolObserver"]
