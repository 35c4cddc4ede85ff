"""``A2ATurn``: what an A2A client's message becomes inside a team.

It is an :class:`~akgentic.plugin_api.AgentMessage` (members read it as a request from
the human) that also carries the A2A task, context and message ids. The event log keeps
it whole, so the A2A view of a team (its tasks, their states and artifacts) is rebuilt
from the log alone: every message whose ``parent_id`` chain leads back to an ``A2ATurn``
belongs to its task.
"""

from __future__ import annotations

from typing import Literal

from akgentic.plugin_api import AgentMessage

__all__ = ["A2ATurn"]


class A2ATurn(AgentMessage):
    """A message an A2A client sent to the team, with the ids of the A2A task it opens."""

    a2a_task_id: str
    a2a_context_id: str
    a2a_message_id: str = ""
    display_type: Literal["human", "ai", "other"] = "human"
