"""UserProxy: the actor that stands for a human inside a team."""

from __future__ import annotations

import logging
from typing import ClassVar

from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent import Akgent, M
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import CancelMessage, Message, ResultMessage, UserMessage
from akgentic.core.proxy import offer_cancel

__all__ = ["UserProxy"]

logger = logging.getLogger(__name__)


class UserProxy(Akgent[BaseConfig, BaseState]):
    """Bridge between a human and the team.

    Any subclass makes ``ActorAddress.is_user_proxy`` true, which is how other
    code finds "the human" without relying on names or roles.
    """

    _is_user_proxy: ClassVar[bool] = True

    def send(self, recipient: ActorAddress, message: M) -> M:
        """Send as any actor; a cancel (``/...`` or CancelMessage) is also offered at once.

        The recipient's run in flight may be waiting on a model that never answers, so
        a ``/stop`` queued behind it would wait as long (see :func:`offer_cancel`).
        """
        sent = super().send(recipient, message)
        content = getattr(message, "content", None)
        if isinstance(message, CancelMessage) or (
            isinstance(content, str) and content.lstrip().startswith("/")
        ):
            offer_cancel(recipient, message)
        return sent

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
