"""NotificationTool runs the shared ToolCardContract (its observer has no orchestrator)."""

from __future__ import annotations

import pytest
from akgentic_notification import NotificationTool, RegisterNotification

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestNotificationToolContract(ToolCardContract):
    """NotificationTool, registered as ``notification`` by this distribution's plugin."""

    card_name = "notification"
    plugin = "akgentic_notification.plugin"
    tool_arguments = {
        "register_notification": {"content": "check CI", "delay_seconds": 5},
    }

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return NotificationTool()
        return NotificationTool(
            max_delay_seconds=3600,
            register_notification=RegisterNotification(instructions="Use {braces} sparingly."),
        )
