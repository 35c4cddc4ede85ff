"""Hook implementation of the search plugin: registers :class:`SearchTool` as ``search``."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import ToolCardSpec, hookimpl
from akgentic_search.card import SearchTool


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``search`` card and the ``akgentic.tool.search`` import path."""
    return [
        ToolCardSpec(
            name="search",
            card=SearchTool,
            description="Tavily web search, page extraction and site crawl.",
            import_paths=("akgentic.tool.search",),
        )
    ]
