"""The cards the kernel ships (TeamTool, MailboxTool) run the shared ToolCardContract."""

from __future__ import annotations

import pytest

from akgentic.testing import ToolCardContract
from akgentic.testing.tool_card_contract import ContractObserver
from akgentic.tool import ActorToolObserver, ToolCard
from akgentic.tool.mailbox import MailboxTool, MailboxToolObserver, ReadMailbox, Stop
from akgentic.tool.model import ModelSwitchToolObserver
from akgentic.tool.team import (
    FireTeamMember,
    GetRoleProfiles,
    GetTeamActivity,
    GetTeamRoster,
    HireTeamMember,
    TeamManagementToolObserver,
    TeamTool,
)


class TestTeamToolContract(ToolCardContract):
    """TeamTool, registered as ``team`` by the ``team-tool`` built-in plugin."""

    card_name = "team"
    plugin = "akgentic.builtin.team_tool"

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return TeamTool()
        return TeamTool(
            hire_team_members=HireTeamMember(instructions="Hire testers before developers."),
            fire_team_members=FireTeamMember(instructions="Never fire the reviewer."),
            get_role_profiles=GetRoleProfiles(),
            get_team_roster=GetTeamRoster(instructions="Greet new members."),
            get_team_activity=GetTeamActivity(recent_messages=1, max_chars=40),
        )


class TestMailboxToolContract(ToolCardContract):
    """MailboxTool, registered as ``mailbox`` by the ``mailbox`` built-in plugin."""

    card_name = "mailbox"
    plugin = "akgentic.builtin.mailbox_tool"

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return MailboxTool()
        return MailboxTool(
            read_mailbox=ReadMailbox(instructions="Only for messages from the user."),
            stop=Stop(instructions="Use it when a run goes astray."),
        )


def test_the_contract_observer_meets_every_observer_protocol_of_the_kernel() -> None:
    # Cards narrow their observer with isinstance checks on these protocols; a stand-in
    # missing one would make such cards fail for a reason the kit does not report.
    observer = ContractObserver()
    for protocol in (
        ActorToolObserver,
        TeamManagementToolObserver,
        MailboxToolObserver,
        ModelSwitchToolObserver,
    ):
        assert isinstance(observer, protocol), protocol.__name__
