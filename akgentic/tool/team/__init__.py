"""Team management: the TeamTool card, its params and context states, and its contract."""

from akgentic.tool.team.observer import TeamManagementToolObserver
from akgentic.tool.team.params import (
    FireTeamMember,
    GetRoleProfiles,
    GetTeamActivity,
    GetTeamRoster,
    HireTeamMember,
)
from akgentic.tool.team.state import MemberEntry, RoleCatalogState, RoleEntry, TeamRosterState
from akgentic.tool.team.team import TeamTool, generated_member_name

__all__ = [
    "FireTeamMember",
    "GetRoleProfiles",
    "GetTeamActivity",
    "GetTeamRoster",
    "HireTeamMember",
    "MemberEntry",
    "RoleCatalogState",
    "RoleEntry",
    "TeamManagementToolObserver",
    "TeamRosterState",
    "TeamTool",
    "generated_member_name",
]
