"""Context states of TeamTool: the roster and the role catalog, delivered as deltas."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from akgentic.tool.core.context_state import ContextState

__all__ = ["MemberEntry", "RoleCatalogState", "RoleEntry", "TeamRosterState"]


class MemberEntry(BaseModel):
    """One member of the team as the model sees it."""

    model_config = ConfigDict(frozen=True)

    name: str
    role: str


class RoleEntry(BaseModel):
    """One role of the catalog (every catalog role can be hired)."""

    model_config = ConfigDict(frozen=True)

    role: str
    description: str = ""


def _member_line(member: MemberEntry) -> str:
    return f"- {member.name} ({member.role})"


def _role_line(role: RoleEntry) -> str:
    text = f"- {role.role}"
    return f"{text}: {role.description}" if role.description else text


class TeamRosterState(ContextState):
    """Who is on the team now (tool actors left out); ``you`` is the owning agent."""

    you: str
    members: list[MemberEntry]

    def render_full(self) -> str:
        lines = [f"Team members (you are {self.you}); address them as @Name:"]
        lines += [_member_line(m) for m in self.members] or ["- nobody else yet"]
        return "\n".join(lines)

    def render_delta(self, previous: TeamRosterState) -> str | None:
        before, now = set(previous.members), set(self.members)
        if before == now and previous.you == self.you:
            return None
        joined = [m for m in self.members if m not in before]
        left = [m for m in previous.members if m not in now]
        lines = ["Team changes:"]
        lines += [f"+ {m.name} ({m.role}) joined" for m in joined]
        lines += [f"- {m.name} ({m.role}) left" for m in left]
        return "\n".join(lines)


class RoleCatalogState(ContextState):
    """The team's role catalog: the roles an agent can hire."""

    roles: list[RoleEntry]

    def render_full(self) -> str:
        if not self.roles:
            return ""
        lines = ["Roles you can hire (name a role as a recipient to hire a new member):"]
        lines += [_role_line(r) for r in self.roles]
        return "\n".join(lines)

    def render_delta(self, previous: RoleCatalogState) -> str | None:
        if previous.roles == self.roles:
            return None
        before = {r.role: r for r in previous.roles}
        now = {r.role: r for r in self.roles}
        lines = ["Role catalog changes:"]
        lines += [f"+ {_role_line(r)[2:]}" for k, r in now.items() if before.get(k) != r]
        lines += [f"- {k} removed" for k in before if k not in now]
        return "\n".join(lines)
