"""``HumanProxy``: where a human enters the team and where agents' messages for them land."""

from __future__ import annotations

import logging

from akgentic.agent.messages import AgentMessage
from akgentic.core.messages.message import Message
from akgentic.core.user_proxy import UserProxy

__all__ = ["HumanProxy"]

logger = logging.getLogger(__name__)


class HumanProxy(UserProxy):
    """A user proxy that speaks :class:`AgentMessage`.

    Messages for the human are only logged here; subscribers of the orchestrator see
    their content through the ``SentMessage`` the sending agent reports. Override
    :meth:`receiveMsg_AgentMessage` to push them to a console, a web socket, e-mail...
    """

    def receiveMsg_AgentMessage(self, message: AgentMessage) -> None:
        """A message for the human arrived (logged only)."""
        sender = message.sender.name if message.sender is not None else "unknown"
        logger.info("%s got a %s from %s", self.config.name, message.type, sender)

    def process_human_input(self, content: str, message: Message) -> None:
        """Send the human's ``content`` back to whoever sent ``message``, as a response."""
        if message.sender is None:
            raise ValueError("the message being answered has no sender")
        previous = self._current_message
        self._current_message = message  # links the answer to the message it answers
        try:
            self.send(message.sender, AgentMessage(content=content, type="response"))
        finally:
            self._current_message = previous
