"""SearchTool runs the shared ToolCardContract, with no Tavily key (nothing is sent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from akgentic_search import SearchTool, WebCrawl, WebFetch, WebSearch

from akgentic.testing import ToolCardContract
from akgentic.tool import ToolCard


class TestSearchToolContract(ToolCardContract):
    """SearchTool, registered as ``search`` by this distribution's plugin module."""

    card_name = "search"
    plugin = "akgentic_search.plugin"

    @pytest.fixture(autouse=True)
    def no_key(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        monkeypatch.delenv("TAVILY_API_KEY", raising=False)
        yield

    @pytest.fixture(params=["defaults", "configured"])
    def card(self, request: pytest.FixtureRequest) -> ToolCard:
        if request.param == "defaults":
            return SearchTool()
        return SearchTool(
            web_search=WebSearch(max_results=3, search_depth="advanced"),
            web_fetch=WebFetch(chunks_per_source=2, instructions="Only official docs."),
            web_crawl=WebCrawl(max_depth=2, limit=10),
        )
