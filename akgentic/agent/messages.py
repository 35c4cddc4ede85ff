"""``AgentMessage``: the one message type agents exchange."""

from __future__ import annotations

from pydantic import Field

from akgentic.agent.output_models import REPLY_PROTOCOLS, Intent
from akgentic.tool.mailbox import MailboxMessage

__all__ = ["PREVIEW_CHARS", "AgentMessage"]

PREVIEW_CHARS = 120
"""Length at which :meth:`AgentMessage.rendering_preview` cuts the content."""


class AgentMessage(MailboxMessage):
    """Text from one team member to another, with the sender's intent.

    The content travels raw: the *receiving* agent prepends the reply guidance that
    matches ``type`` (see :data:`~akgentic.agent.output_models.REPLY_PROTOCOLS`) when its
    model reads the message, through :meth:`rendering`.
    """

    type: Intent = "request"
    content: str = Field(default="")

    def _sender_name(self) -> str:
        return self.sender.name if self.sender is not None else "unknown"

    def rendering(self) -> str:
        """The content headed by who sent it, with which intent, and how to reply."""
        sender = self._sender_name()
        article = "an" if self.type[0] in "aeiou" else "a"
        guidance = REPLY_PROTOCOLS[self.type].format(sender=sender)
        return f"You received {article} {self.type} from {sender}. {guidance}\n\n{self.content}"

    def rendering_preview(self) -> str:
        """``<sender> (<type>): <content on one line, cut>``."""
        flat = " ".join(self.content.split())
        if len(flat) > PREVIEW_CHARS:
            flat = flat[:PREVIEW_CHARS] + "…"
        return f"{self._sender_name()} ({self.type}): {flat}"
