"""akgentic.agent: LLM agents that talk through typed messages and structured output.

``BaseAgent`` runs each incoming :class:`AgentMessage` through its model and delivers
the :class:`StructuredOutput` the model returns; ``HumanProxy`` is where a person
enters the team. Importing this package does not import pydantic-ai: agents build
their model when they start.
"""

from akgentic.agent.agent import BaseAgent
from akgentic.agent.config import AgentConfig, AgentState
from akgentic.agent.human_proxy import HumanProxy
from akgentic.agent.messages import AgentMessage
from akgentic.agent.output_models import REPLY_PROTOCOLS, Request, StructuredOutput
from akgentic.agent.routing import TeamDirectory, resolve_recipient
from akgentic.tool.mailbox import MailboxMessage, RunInterruptedError

__all__ = [
    "REPLY_PROTOCOLS",
    "AgentConfig",
    "AgentMessage",
    "AgentState",
    "BaseAgent",
    "HumanProxy",
    "MailboxMessage",
    "Request",
    "RunInterruptedError",
    "StructuredOutput",
    "TeamDirectory",
    "resolve_recipient",
]
