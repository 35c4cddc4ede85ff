"""A team that answers its human without a model: the example team of docs/mcp-server.md.

``Replier`` answers every message from the human at once, so a client sees a
deterministic reply:

- ``ask me ...``: asks the human a question back (a ``request``), which
  ``akgentic mcp serve`` lists as open until the human answers it;
- an answer to that question (a ``response``): ``Noted: <answer>``;
- anything else: ``Echo: <text>``.

The card ``replier-team.yaml`` next to this file names it ``replier_team.Replier``.
"""

from __future__ import annotations

from akgentic.agent import AgentMessage
from akgentic.core import BaseConfig, BaseState
from akgentic.core.agent import Akgent

QUESTION = "Which colour should the report be?"


class Replier(Akgent[BaseConfig, BaseState]):
    """Answers the human (see the module docstring)."""

    def receiveMsg_AgentMessage(self, message: AgentMessage) -> None:
        sender = message.sender
        if sender is None:
            return
        if message.type == "response":
            self.send(sender, AgentMessage(type="response", content=f"Noted: {message.content}"))
        elif message.content.startswith("ask me"):
            self.send(sender, AgentMessage(type="request", content=QUESTION))
        else:
            self.send(sender, AgentMessage(type="response", content=f"Echo: {message.content}"))
