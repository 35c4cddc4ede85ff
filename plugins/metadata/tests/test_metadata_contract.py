"""MetadataTool runs the shared ToolCardContract."""

from __future__ import annotations

import pytest
from akgentic_metadata import MetadataTool, RenderMetadata

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestMetadataToolContract(ToolCardContract):
    """MetadataTool, registered as ``metadata`` by this distribution's plugin module."""

    card_name = "metadata"
    plugin = "akgentic_metadata.plugin"

    @pytest.fixture
    def card(self) -> ToolCard:
        return MetadataTool(
            render_metadata=RenderMetadata(
                template="FY {fiscal_year}", header="Team context", instructions="Cite it."
            )
        )
