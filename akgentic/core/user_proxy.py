"""UserProxy: the actor that stands for a human inside a team."""

from __future__ import annotations

import logging
from typing import ClassVar

from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import Message, ResultMessage, UserMessage

__all__ = ["UserProxy"]

logger = logging.getLogger(__name__)


class UserProxy(Akgent[BaseConfig, BaseState]):
    """Bridge between a human and the team.

    Any subclass makes ``ActorAddress.is_user_proxy`` true, which is how other
    code finds "the human" without relying on names or roles.
    """

    _is_user_proxy: ClassVar[bool] = True

    def receiveMsg_UserMessage(self, message: UserMessage) -> None:
        """Override to push the message to a UI; logs it by default."""
        logger.info("%s received: %s", self.config.name, message.content)

    def process_human_input(self, content: str, message: Message) -> None:
        """Answer ``message`` with the human's ``content`` (a ResultMessage to its sender)."""
        if message.sender is None:
            raise ValueError("the message being answered has no sender")
        previous = self._current_message
        self._current_message = message  # so the answer is causally linked to it
        try:
            self.send(message.sender, ResultMessage(content=content))
        finally:
            self._current_message = previous
