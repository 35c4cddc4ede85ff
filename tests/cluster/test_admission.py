"""Cards from untrusted sources may not start host processes unless the operator allows it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.agent.config import AgentConfig
from akgentic.cluster.admission import (
    ALLOW_HOST_PROCESSES_ENV_VAR,
    HostProcessesRefusedError,
    check_host_processes,
    host_processes,
    host_processes_allowed,
)
from akgentic.cluster.host import TeamHost
from akgentic.core.actor_system import ActorSystem
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig
from akgentic.team.card import TeamCard, TeamCardMember
from akgentic.team.manager import TeamManager
from akgentic.team.stores.sqlite import SqliteEventStore
from akgentic.tool import ToolCard


class HostCommandTool(ToolCard):
    """A card that says it would start a program on the host."""

    command: str = "rm -rf /tmp/never"

    def get_tools(self) -> list[Callable[..., Any]]:
        return []

    def host_processes(self) -> list[str]:
        return [f"a host command: {self.command!r}"]


class QuietTool(ToolCard):
    """A card that starts nothing."""

    def get_tools(self) -> list[Callable[..., Any]]:
        return []


def _agent(name: str, tools: list[ToolCard], *, hireable: bool = False) -> AgentCard:
    return AgentCard(
        agent_class="akgentic.agent.BaseAgent",
        description=name,
        config=AgentConfig(name=name, role=name.strip("@"), tools=tools),
        can_be_hired=hireable,
    )


def _team(*, member: list[ToolCard], nested: list[ToolCard], profile: list[ToolCard]) -> TeamCard:
    lead = TeamCardMember(
        card=_agent("@Lead", member),
        members=[TeamCardMember(card=_agent("@Deep", nested))],
    )
    return TeamCard(
        name="hostile",
        entry_point=TeamCardMember(
            card=AgentCard(
                agent_class="akgentic.agent.HumanProxy",
                description="human",
                config=BaseConfig(name="@Human", role="Human"),
            )
        ),
        members=[lead],
        agent_profiles=[_agent("@Hire", profile, hireable=True)],
    )


def test_every_host_process_of_the_tree_is_found_members_subordinates_and_profiles() -> None:
    card = _team(
        member=[QuietTool(), HostCommandTool(command="a")],
        nested=[HostCommandTool(command="b")],
        profile=[HostCommandTool(command="c")],
    )
    found = sorted((p.agent, p.process) for p in host_processes(card))
    assert found == [
        ("@Deep", "a host command: 'b'"),
        ("@Hire", "a host command: 'c'"),
        ("@Lead", "a host command: 'a'"),
    ]
    quiet = _team(member=[QuietTool()], nested=[], profile=[])
    assert host_processes(quiet) == []
    check_host_processes(quiet, allowed=False, source="test")


def test_a_card_with_host_processes_is_refused_naming_the_card_and_the_setting() -> None:
    card = _team(member=[], nested=[HostCommandTool()], profile=[])
    with pytest.raises(HostProcessesRefusedError) as refused:
        check_host_processes(card, allowed=False, source="a team created in the console")
    message = str(refused.value)
    assert "@Deep" in message and "rm -rf /tmp/never" in message
    assert "--allow-host-processes" in message and ALLOW_HOST_PROCESSES_ENV_VAR in message
    check_host_processes(card, allowed=True, source="the operator")


def test_the_setting_reads_only_true_values() -> None:
    assert not host_processes_allowed({})
    assert not host_processes_allowed({ALLOW_HOST_PROCESSES_ENV_VAR: "0"})
    assert not host_processes_allowed({ALLOW_HOST_PROCESSES_ENV_VAR: "no"})
    assert host_processes_allowed({ALLOW_HOST_PROCESSES_ENV_VAR: "1"})
    assert host_processes_allowed({ALLOW_HOST_PROCESSES_ENV_VAR: " TRUE "})


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[TeamManager]:
    system = ActorSystem()
    store = SqliteEventStore(tmp_path / "teams.db")
    manager = TeamManager(system, store)
    try:
        yield manager
    finally:
        system.shutdown()
        store.close()


def test_a_host_taking_remote_placements_refuses_host_processes_by_default(
    manager: TeamManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_HOST_PROCESSES_ENV_VAR, raising=False)
    host = TeamHost(manager)
    try:
        card = _team(member=[HostCommandTool()], nested=[], profile=[])
        with pytest.raises(HostProcessesRefusedError, match="placed team"):
            host.create(card, None, "remote")
        assert manager.list_teams() == []
    finally:
        host.close()
