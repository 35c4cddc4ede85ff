"""ModelTool runs the shared ToolCardContract (the kit's observer has an empty roster)."""

from __future__ import annotations

import pytest
from akgentic_model import ListModels, ModelTool, SwitchModel

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestModelToolContract(ToolCardContract):
    """ModelTool, registered as ``model`` by this distribution's plugin module."""

    card_name = "model"
    plugin = "akgentic_model.plugin"

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return ModelTool()
        return ModelTool(
            list_models=ListModels(instructions="List before switching."),
            switch_model=SwitchModel(instructions="Switch only when asked."),
        )
