"""``TeamTool``: hire and fire members, see the roster, the role catalog and who is busy.

Every ``BaseAgent`` carries this card. A role can be hired exactly when it is in the
orchestrator's role catalog, i.e. was registered with ``register_agent_profiles`` or
listed in a team card's ``agent_profiles``. A member being on the team does not put its
role in the catalog, and ``AgentCard.can_be_hired`` is informational only. The hired
agent is started as a child of the agent that hired it.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from akgentic.core.actor_address import ActorAddress  # runtime: read by the command parser
from akgentic.core.orchestrator import TOOL_ACTOR_PREFIX
from akgentic.core.proxy import interrupt_actor
from akgentic.llm.team_budget import BUDGET_SERVICE, TeamBudget
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, TOOL_CALL
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.params import BaseToolParam
from akgentic.tool.errors import RetriableError
from akgentic.tool.team.activity import render_activity
from akgentic.tool.team.limits import check_batch, counted, full_team, hiring
from akgentic.tool.team.observer import TeamManagementToolObserver
from akgentic.tool.team.params import (
    FireTeamMember,
    GetRoleProfiles,
    GetTeamActivity,
    GetTeamRoster,
    HireTeamMember,
)
from akgentic.tool.team.state import MemberEntry, RoleCatalogState, RoleEntry, TeamRosterState

if TYPE_CHECKING:
    from akgentic.core.agent_card import AgentCard

__all__ = ["TeamTool", "generated_member_name"]

logger = logging.getLogger(__name__)

_rng = random.Random()

_team_observer_classes: set[type] = set()
"""Observer classes already found to satisfy TeamManagementToolObserver.

A runtime protocol check reads every member of the protocol (properties included), and
TeamTool asks for its observer several times per turn; the answer is a property of
the agent's class, so it is worked out once per class.
"""


def generated_member_name(role: str, taken: Callable[[str], bool]) -> str:
    """``@<Role without spaces><n>``: n starts at a random 100-999 and counts up until free."""
    stem = "".join(role.split())
    number = _rng.randint(100, 999)
    while taken(f"@{stem}{number}"):
        number += 1
    return f"@{stem}{number}"


def _as_member_name(name: str) -> str:
    cleaned = name.strip()
    return cleaned if cleaned.startswith("@") else f"@{cleaned}"


class TeamTool(ToolCard):
    """Team management for an agent: hire, fire, roster, role catalog, activity.

    Channels (each capability can be switched off with ``False``):

    - ``hire_team_members``: ``hire_members(roles)`` (TOOL_CALL) and
      ``hire_member(role, name=None)`` (COMMAND, returns the new address);
    - ``fire_team_members``: ``fire_members(names)`` and ``fire_member(name)``;
    - ``get_role_profiles``: the role catalog as context state and ``team_roles()``;
    - ``get_team_roster``: the members as context state and ``team_members()``;
    - ``get_team_activity``: ``team_activity()``, from telemetry, truncation only.

    Requires a :class:`~akgentic.tool.team.observer.TeamManagementToolObserver`.
    """

    hire_team_members: HireTeamMember | bool = True
    fire_team_members: FireTeamMember | bool = True
    get_role_profiles: GetRoleProfiles | bool = True
    get_team_roster: GetTeamRoster | bool = True
    get_team_activity: GetTeamActivity | bool = True

    # ------------------------------------------------------------ plumbing

    def _team_observer(self) -> TeamManagementToolObserver:
        observer = self._observer
        if type(observer) in _team_observer_classes:
            return cast(TeamManagementToolObserver, observer)
        if not isinstance(observer, TeamManagementToolObserver):
            raise TypeError(
                f"TeamTool needs a TeamManagementToolObserver; {type(observer).__name__} is not one"
            )
        _team_observer_classes.add(type(observer))
        return observer

    def _orchestrator(self) -> Any:
        observer = self._team_observer()
        address = observer.orchestrator
        if address is None:
            raise RetriableError("This agent is not part of a team: there is nobody to manage.")
        return observer.proxy_ask(address)

    def _catalog(self) -> dict[str, AgentCard]:
        catalog: dict[str, AgentCard] = self._orchestrator().get_agent_catalog()
        return catalog

    def _members(self) -> list[ActorAddress]:
        """Team members other than tool actors and the owning agent."""
        observer = self._team_observer()
        me = observer.myAddress.agent_id
        team: list[ActorAddress] = self._orchestrator().get_team()
        return [
            m
            for m in team
            if m.agent_id != me
            and not m.name.startswith(TOOL_ACTOR_PREFIX)
            and m.agent_id != getattr(observer.orchestrator, "agent_id", None)
        ]

    # ------------------------------------------------------------- hiring

    def _hire_param(self) -> HireTeamMember:
        """The hiring caps in force (the defaults when hiring is simply on)."""
        return self._param(self.hire_team_members, HireTeamMember) or HireTeamMember()

    def team_size(self) -> int:
        """Members counting toward ``max_team_size`` now (this agent included)."""
        return counted(self._orchestrator().get_team())

    def hire(self, role: str, name: str | None = None) -> ActorAddress:
        """Hire one member of ``role`` as a child of the owning agent and return its address.

        The team is counted and the member started under the team's hiring lock, so the
        ``max_team_size`` cap holds when several agents hire at once.

        Raises:
            RetriableError: The role is not in the catalog, the name is taken/empty, the
                team is at its ``max_team_size``, or the team budget is below the hiring
                floor its card sets.
        """
        observer = self._team_observer()
        orchestrator = self._orchestrator()
        team_key = cast(ActorAddress, observer.orchestrator).agent_id  # checked just above
        wanted = role.strip()
        catalog: dict[str, AgentCard] = orchestrator.get_agent_catalog()
        card = catalog.get(wanted)
        if card is None:
            listed = ", ".join(sorted(catalog)) or "none"
            raise RetriableError(f"There is no role {wanted!r} to hire. Hireable roles: {listed}.")
        agent_class = card.get_agent_class()
        param = self._hire_param()
        budget = orchestrator.team_service(BUDGET_SERVICE)
        refusal = budget.hire_refusal() if isinstance(budget, TeamBudget) else None
        if refusal is not None:
            raise RetriableError(refusal)

        def taken(candidate: str) -> bool:
            return orchestrator.get_team_member(candidate) is not None

        with hiring(team_key):
            size = counted(orchestrator.get_team())
            if size >= param.max_team_size:
                raise full_team(param, size)
            if name is not None and name.strip():
                member_name = _as_member_name(name)
                if taken(member_name):
                    raise RetriableError(
                        f"The name {member_name} is already taken; choose another."
                    )
            elif name is not None:
                raise RetriableError("A member's name cannot be empty.")
            else:
                member_name = generated_member_name(card.role, taken)
            config = card.get_config_copy()
            config.name = member_name
            config.role = card.role
            address = observer.createActor(agent_class, config=config)
        observer.on_hire(address)
        logger.info("%s hired %s (%s)", observer.myAddress.name, member_name, card.role)
        return address

    def fire(self, name: str) -> str:
        """Stop the member called ``name``; returns a confirmation.

        Raises:
            RetriableError: No such member, or it is the owning agent or a human.
        """
        observer = self._team_observer()
        member_name = _as_member_name(name)
        members = self._members()
        target = next((m for m in members if m.name == member_name), None)
        if target is None:
            if member_name == observer.myAddress.name:
                raise RetriableError("An agent cannot fire itself.")
            listed = ", ".join(m.name for m in members) or "none"
            raise RetriableError(f"There is no member {member_name}. Members: {listed}.")
        if target.is_user_proxy:
            raise RetriableError(f"{member_name} stands for a human and cannot be fired.")
        interrupt_actor(target)  # a model call in flight would hold the stop back
        observer.proxy_ask(target).stop()
        observer.on_fire(target)
        logger.info("%s fired %s", observer.myAddress.name, member_name)
        return f"{member_name} has left the team."

    # --------------------------------------------------------- renderings

    def roster_state(self) -> TeamRosterState:
        """The current roster snapshot (raises when the team cannot be reached)."""
        observer = self._team_observer()
        members = [MemberEntry(name=m.name, role=m.role) for m in self._members()]
        return TeamRosterState(you=observer.myAddress.name, members=members)

    def catalog_state(self) -> RoleCatalogState:
        """The role catalog snapshot (raises when the team cannot be reached)."""
        roles = [
            RoleEntry(role=role, description=card.description)
            for role, card in self._catalog().items()
        ]
        return RoleCatalogState(roles=roles)

    # -------------------------------------------------------------- hooks

    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        hire = self._param(self.hire_team_members, HireTeamMember, TOOL_CALL)
        if hire is not None:
            tools.append(hire.apply_instructions(self._build_hire_members()))
        fire = self._param(self.fire_team_members, FireTeamMember, TOOL_CALL)
        if fire is not None:
            tools.append(fire.apply_instructions(self._build_fire_members()))
        activity = self._param(self.get_team_activity, GetTeamActivity, TOOL_CALL)
        if activity is not None:
            tools.append(activity.apply_instructions(self._build_team_activity(activity)))
        return tools

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        if self._param(self.hire_team_members, HireTeamMember, COMMAND) is not None:

            def hire_member(role: str, name: str | None = None) -> ActorAddress:
                """Hire one member of a role (optionally with a chosen @name)."""
                return self.hire(role, name)

            commands[HireTeamMember] = hire_member
        if self._param(self.fire_team_members, FireTeamMember, COMMAND) is not None:

            def fire_member(name: str) -> str:
                """Fire the member with this @name."""
                return self.fire(name)

            commands[FireTeamMember] = fire_member
        if self._param(self.get_team_roster, GetTeamRoster, COMMAND) is not None:

            def team_members() -> str:
                """Show the current team members."""
                return self.roster_state().render_full()

            commands[GetTeamRoster] = team_members
        if self._param(self.get_role_profiles, GetRoleProfiles, COMMAND) is not None:

            def team_roles() -> str:
                """Show the roles that can be hired in this team."""
                return self.catalog_state().render_full() or "No roles are registered."

            commands[GetRoleProfiles] = team_roles
        return commands

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        providers: list[Callable[[], ContextState | None]] = []
        if self._param(self.get_team_roster, GetTeamRoster, LLM_CONTEXT) is not None:

            def team_roster_state() -> ContextState | None:
                try:
                    return self.roster_state()
                except Exception:
                    logger.debug("team roster unavailable", exc_info=True)
                    return None

            providers.append(team_roster_state)
        if self._param(self.get_role_profiles, GetRoleProfiles, LLM_CONTEXT) is not None:

            def role_catalog_state() -> ContextState | None:
                try:
                    return self.catalog_state()
                except Exception:
                    logger.debug("role catalog unavailable", exc_info=True)
                    return None

            providers.append(role_catalog_state)
        return providers

    # ------------------------------------------------------------ builders

    def _build_hire_members(self) -> Callable[..., str]:
        def hire_members(roles: list[str]) -> str:
            """Hire new team members, one per role listed (a role may repeat).

            Only roles listed in the team's role catalog can be hired. Each new member
            gets its own @name, reported back; address it with that name afterwards.

            Args:
                roles: Role names from the catalog, e.g. ["Developer", "Tester"].
            """
            if not roles:
                raise RetriableError("Name at least one role to hire.")
            check_batch(self._hire_param(), len(roles), self.team_size())
            hired: list[str] = []
            errors: list[str] = []
            for role in roles:
                try:
                    address = self.hire(role)
                except RetriableError as error:
                    errors.append(f"{role}: {error}")
                    continue
                hired.append(f"{address.name} ({address.role})")
            if not hired:
                raise RetriableError("Nobody was hired. " + " ".join(errors))
            if errors:
                return (
                    f"Partial success - hired: {', '.join(hired)}. Not hired - {'; '.join(errors)}"
                )
            return f"Hired: {', '.join(hired)}."

        return hire_members

    def _build_fire_members(self) -> Callable[..., str]:
        def fire_members(names: list[str]) -> str:
            """Remove members from the team; each one stops working at once.

            Args:
                names: The members' @names, e.g. ["@Developer123"].
            """
            if not names:
                raise RetriableError("Name at least one member to fire.")
            fired: list[str] = []
            errors: list[str] = []
            for name in names:
                try:
                    self.fire(name)
                except RetriableError as error:
                    errors.append(f"{name}: {error}")
                    continue
                fired.append(_as_member_name(name))
            if not fired:
                raise RetriableError("Nobody was fired. " + " ".join(errors))
            if errors:
                return (
                    f"Partial success - fired: {', '.join(fired)}. Not fired - {'; '.join(errors)}"
                )
            return f"Fired: {', '.join(fired)}."

        return fire_members

    def _build_team_activity(self, param: GetTeamActivity) -> Callable[..., str]:
        recent, limit = param.recent_messages, param.max_chars

        def team_activity() -> str:
            """See who on the team is busy right now and what each member sent last."""
            members = self._members()
            history = list(self._orchestrator().get_messages())
            return render_activity(members, history, recent_messages=recent, max_chars=limit)

        return team_activity
