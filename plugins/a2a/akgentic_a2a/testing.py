"""Test and bench helpers of the a2a plugin: an echo team that needs no model.

``EchoAgent`` answers every ``AgentMessage`` request with ``Echo: <text>`` to its
sender, at once; :func:`echo_team_yaml` is the card of a team entered by ``@Human``
with one such member. The A2A bench uses it, so that what it measures is the
protocol's cost, not a model's.
"""

from __future__ import annotations

from akgentic.plugin_api import ActorAddress, AgentMessage, Akgent, BaseConfig, BaseState

__all__ = ["EchoAgent", "echo_team_yaml"]


class EchoAgent(Akgent[BaseConfig, BaseState]):
    """Answers each request with ``Echo: <text>``."""

    def receiveMsg_AgentMessage(self, message: AgentMessage, sender: ActorAddress | None) -> None:
        """Echo a request back to its sender."""
        if sender is not None and message.type == "request":
            self.send(sender, AgentMessage(content=f"Echo: {message.content}", type="response"))


def echo_team_yaml(name: str = "a2a-echo") -> str:
    """A team card: ``@Human`` and one :class:`EchoAgent` supervisor, ``@Echo``."""
    return f"""\
name: {name}
description: Echoes every request, with no model
entry_point:
  card:
    agent_class: akgentic.agent.HumanProxy
    description: The person
    config: {{name: "@Human", role: Human}}
members:
  - card:
      agent_class: akgentic_a2a.testing.EchoAgent
      description: Echoes every request
      config: {{name: "@Echo", role: Echo}}
message_types: [akgentic.agent.AgentMessage]
"""
