"""The shout card runs the shared ToolCardContract, as any third-party card should."""

from __future__ import annotations

import pytest
from akgentic_hello.shout import Shout, ShoutLog, ShoutRules, ShoutTool

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestShoutToolContract(ToolCardContract):
    """ShoutTool, registered as ``shout`` by this distribution's plugin module."""

    card_name = "shout"
    plugin = "akgentic_hello.plugin"

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return ShoutTool()
        return ShoutTool(
            shout=Shout(suffix="!!", max_length=40, instructions="Never shout at the user."),
            rules=ShoutRules(rule="Shout only about fires."),
            log=ShoutLog(recent=1),
        )
