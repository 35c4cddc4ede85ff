"""The ``agent`` built-in plugin: the LLM agent classes and their message type.

Registers ``BaseAgent`` and ``HumanProxy`` as agent classes and ``AgentMessage``
as a message type, so team cards can name them without dotted paths. Importing
this module is cheap: the classes are imported when the registry asks.
"""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugins import AgentClassSpec, MessageTypeSpec, hookimpl


@hookimpl
def akgentic_agent_classes() -> Iterable[AgentClassSpec]:
    """``BaseAgent`` (an LLM team member) and ``HumanProxy`` (the human's seat)."""
    from akgentic.agent import BaseAgent, HumanProxy

    return [
        AgentClassSpec(name="BaseAgent", agent_class=BaseAgent,
                       description="An LLM-driven team member"),
        AgentClassSpec(name="HumanProxy", agent_class=HumanProxy,
                       description="The human's seat in a team"),
    ]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """``AgentMessage``: the message agents exchange."""
    from akgentic.agent import AgentMessage

    return [
        MessageTypeSpec(name="AgentMessage", message_class=AgentMessage,
                        description="A message between team members")
    ]
