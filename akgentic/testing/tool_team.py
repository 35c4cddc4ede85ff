"""A real team for testing cards that own a tool actor: an actor system and an orchestrator.

Cards such as planning and the knowledge graph create their ``#``-named actor under the
orchestrator of the agent they are bound to; :class:`TeamObserver` is the contract
kit's agent stand-in with such an orchestrator, and :class:`ToolTeam` makes them.

Example (a plugin's ``conftest.py``)::

    @pytest.fixture
    def team() -> Iterator[ToolTeam]:
        made = ToolTeam()
        yield made
        made.shutdown()
"""

from __future__ import annotations

from typing import Any

from akgentic.core import ActorSystem, BaseConfig, Orchestrator
from akgentic.core.actor_address import ActorAddress
from akgentic.core.proxy import ProxyWrapper
from akgentic.testing.tool_card_contract import ContractObserver

__all__ = ["TeamObserver", "ToolTeam"]


class TeamObserver(ContractObserver):
    """The kit's agent stand-in, but a member of a real team: it has an orchestrator."""

    def __init__(self, orchestrator: ActorAddress, *, name: str = "@contract") -> None:
        super().__init__(name=name)
        self._orchestrator_address = orchestrator

    @property
    def orchestrator(self) -> ActorAddress | None:
        """The live orchestrator of the test team."""
        return self._orchestrator_address

    def proxy_ask(self, actor: Any, actor_type: Any = None, timeout: float | None = None) -> Any:
        """A blocking proxy to ``actor``, as an agent's own would be."""
        return ProxyWrapper(actor, timeout=timeout or 30.0)


class ToolTeam:
    """An actor system with one orchestrator; ``observer(name)`` makes members."""

    def __init__(self) -> None:
        self.system = ActorSystem()
        self.orchestrator = self.system.createActor(
            Orchestrator, config=BaseConfig(role="Orchestrator", name="@Orchestrator")
        )
        self.proxy: Any = self.system.proxy_ask(self.orchestrator, Orchestrator)
        self.kept: list[TeamObserver] = []

    def observer(self, name: str) -> TeamObserver:
        """A member stand-in named ``name`` (kept alive by the team)."""
        member = TeamObserver(self.orchestrator, name=name)
        self.kept.append(member)
        return member

    def member(self, name: str) -> ActorAddress | None:
        """The team member called ``name``."""
        found: ActorAddress | None = self.proxy.get_team_member(name)
        return found

    def shutdown(self) -> None:
        """Stop every actor of the team."""
        self.system.shutdown(timeout=10)
