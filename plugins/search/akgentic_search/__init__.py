"""The ``search`` card: Tavily web search, fetch and crawl for an agent.

Also importable as ``akgentic.tool.search`` (a seed import path this plugin serves).
The Tavily client is imported only when a tool runs.
"""

from akgentic_search.card import (
    BASE_URL_VARIABLE,
    KEY_VARIABLE,
    SearchTool,
    WebCrawl,
    WebFetch,
    WebSearch,
)

__all__ = ["BASE_URL_VARIABLE", "KEY_VARIABLE", "SearchTool", "WebCrawl", "WebFetch", "WebSearch"]
