"""Proxies and team/catalog look-ups shared by every Akgent (a mixin of Akgent)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from akgentic.core.actor_address import ActorAddress
from akgentic.core.agent_config import BaseConfig
from akgentic.core.errors import WarningError
from akgentic.core.proxy import ProxyFactory, ProxyWrapper

if TYPE_CHECKING:
    from akgentic.core.agent_card import AgentCard
    from akgentic.core.orchestrator import Orchestrator

__all__ = ["TeamAccess"]

T = TypeVar("T")


class TeamAccess(ProxyFactory):
    """Typed proxies plus the look-ups an actor makes on its orchestrator.

    Without an orchestrator, ``get_team``/``get_team_member`` raise
    :class:`WarningError` and the catalog look-ups return empty results.
    """

    agent_id: UUID
    config: BaseConfig
    _orchestrator: ActorAddress | None
    _orchestrator_proxy: Any

    @property
    def orchestrator_proxy_ask(self) -> Orchestrator:
        """Blocking proxy on the orchestrator (built on first use)."""
        if self._orchestrator is None:
            raise WarningError(f"{self.config.name} has no orchestrator")
        if self._orchestrator_proxy is None:
            self._orchestrator_proxy = ProxyWrapper(self._orchestrator)
        return cast("Orchestrator", self._orchestrator_proxy)

    # ------------------------------------------------------------ team/catalog

    def _is_orchestrator(self) -> bool:
        return self._orchestrator is not None and self._orchestrator.agent_id == self.agent_id

    def _orchestrator_call(self, name: str, *args: Any) -> Any:
        target: Any = self if self._is_orchestrator() else self.orchestrator_proxy_ask
        return getattr(target, name)(*args)

    def _team_members(self) -> list[ActorAddress]:
        if self._orchestrator is None:
            return []
        members: list[ActorAddress] = self._orchestrator_call("get_team")
        return members

    def get_team(self) -> list[ActorAddress]:
        """Current members of the team (raises WarningError without an orchestrator)."""
        if self._orchestrator is None:
            raise WarningError(f"{self.config.name} has no team")
        return self._team_members()

    def get_team_member(self, name: str) -> ActorAddress | None:
        """Team member called ``name`` (raises WarningError without an orchestrator)."""
        if self._orchestrator is None:
            raise WarningError(f"{self.config.name} has no team")
        member: ActorAddress | None = self._orchestrator_call("get_team_member", name)
        return member

    def discover_catalog(self) -> dict[str, AgentCard]:
        """The team's role catalog (empty without an orchestrator)."""
        if self._orchestrator is None:
            return {}
        catalog: dict[str, AgentCard] = self._orchestrator_call("get_agent_catalog")
        return catalog

    def get_agent_card(self, role: str) -> AgentCard | None:
        """Card registered for ``role``, if any."""
        if self._orchestrator is None:
            return None
        card: AgentCard | None = self._orchestrator_call("get_agent_profile", role)
        return card

    def find_agents_with_skill(self, skill: str) -> list[AgentCard]:
        """Cards that list ``skill``."""
        if self._orchestrator is None:
            return []
        cards: list[AgentCard] = self._orchestrator_call("get_profiles_by_skill", skill)
        return cards

    def get_available_roles(self) -> list[str]:
        """Roles in the catalog."""
        if self._orchestrator is None:
            return []
        roles: list[str] = self._orchestrator_call("get_available_roles")
        return roles
