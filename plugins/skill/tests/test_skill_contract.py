"""SkillTool runs the shared ToolCardContract."""

from __future__ import annotations

import pytest
from akgentic_skill import SkillEntry, Skills, SkillTool

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestSkillToolContract(ToolCardContract):
    """SkillTool, registered as ``skill`` by this distribution's plugin module."""

    card_name = "skill"
    plugin = "akgentic_skill.plugin"
    tool_arguments = {"use_skill": {"name": "refund-policy"}}

    @pytest.fixture(params=["empty", "library"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "empty":
            return SkillTool()
        return SkillTool(
            skills=Skills(
                skills=[
                    SkillEntry(
                        name="refund-policy",
                        description="Approval rules for refunds.",
                        content="Refunds over 500 EUR need a manager.",
                    )
                ],
                instructions="Load a skill before answering about refunds.",
            )
        )
