"""Params of :class:`~akgentic.tool.team.team.TeamTool`, one per capability."""

from __future__ import annotations

from pydantic import Field

from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam

__all__ = [
    "DEFAULT_MAX_PER_CALL",
    "DEFAULT_MAX_TEAM_SIZE",
    "FireTeamMember",
    "GetRoleProfiles",
    "GetTeamActivity",
    "GetTeamRoster",
    "HireTeamMember",
]


DEFAULT_MAX_TEAM_SIZE = 50
"""Agents a team may hold by default: every hire is an actor thread and a model client."""

DEFAULT_MAX_PER_CALL = 10
"""Roles one ``hire_members`` call may name by default."""


class HireTeamMember(BaseToolParam):
    """Hiring: ``hire_members(roles)`` for the model, ``/hire_member role [name]`` for people.

    Every hire starts an actor (a thread, a model client), so hiring is bounded. A hire
    beyond a cap is refused with a message stating the cap and how many may still be
    hired; nothing is started.

    Attributes:
        max_team_size: Agents the team may hold, counted when this agent hires (humans
            and tool actors are not counted). Applies to every way this agent hires:
            the tool, ``/hire_member``, and a message routed to a role name.
        max_per_call: Roles one ``hire_members`` call may name; a longer list is
            refused whole.
    """

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})
    max_team_size: int = Field(default=DEFAULT_MAX_TEAM_SIZE, ge=1)
    max_per_call: int = Field(default=DEFAULT_MAX_PER_CALL, ge=1)


class FireTeamMember(BaseToolParam):
    """Firing: ``fire_members(names)`` for the model, ``/fire_member name`` for people."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})


class GetRoleProfiles(BaseToolParam):
    """The role catalog: context state for the model, ``/team_roles`` for people."""

    expose: set[Channels] = Field(default_factory=lambda: {LLM_CONTEXT, COMMAND})


class GetTeamRoster(BaseToolParam):
    """The current members: context state for the model, ``/team_members`` for people."""

    expose: set[Channels] = Field(default_factory=lambda: {LLM_CONTEXT, COMMAND})


class GetTeamActivity(BaseToolParam):
    """``team_activity()``: who is busy and what each member said last.

    Derived from the telemetry the orchestrator already records, by truncation only
    (no model call, no extra actor).

    Attributes:
        recent_messages: How many of each member's latest sent messages are listed.
        max_chars: Each listed message is cut to this many characters.
    """

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL})
    recent_messages: int = Field(default=3, ge=0)
    max_chars: int = Field(default=160, ge=10)
