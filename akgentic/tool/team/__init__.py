"""Team management: the contract the TeamTool card needs from its agent."""

from akgentic.tool.team.observer import TeamManagementToolObserver

__all__ = ["TeamManagementToolObserver"]
