"""Params of :class:`~akgentic.tool.team.team.TeamTool`, one per capability."""

from __future__ import annotations

from pydantic import Field

from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam

__all__ = [
    "FireTeamMember",
    "GetRoleProfiles",
    "GetTeamActivity",
    "GetTeamRoster",
    "HireTeamMember",
]


class HireTeamMember(BaseToolParam):
    """Hiring: ``hire_members(roles)`` for the model, ``/hire_member role [name]`` for people."""

    expose: set[Channels] = Field(default_factory=lambda: {TOOL_CALL, COMMAND})


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
