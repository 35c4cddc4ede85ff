"""``SearchTool``: Tavily web search, page extraction and site crawl for the model.

Each param's fields are the defaults of the built tool's arguments (the model may
pass other values within Tavily's ranges, which are enforced at construction and on
every call). The tools never raise for a missing key or a Tavily failure: the model
gets a sentence saying the tool is unavailable. The Tavily client is imported in the
tool body, so listing cards never imports it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from akgentic.plugin_api import TOOL_CALL, BaseToolParam, RetriableError, ToolCard

__all__ = ["BASE_URL_VARIABLE", "KEY_VARIABLE", "SearchTool", "WebCrawl", "WebFetch", "WebSearch"]

logger = logging.getLogger(__name__)

KEY_VARIABLE = "TAVILY_API_KEY"
BASE_URL_VARIABLE = "AKGENTIC_TAVILY_BASE_URL"
DEFAULT_BASE_URL = "https://api.tavily.com"

Depth = Literal["basic", "advanced"]


def _basic_when_null(value: Any) -> Any:
    return "basic" if value is None else value


class WebSearch(BaseToolParam):
    """``web_search``: sources and snippets for a query.

    Attributes:
        max_results: Default number of results (0 to 20).
        search_depth: Default depth, ``basic`` or ``advanced``.
    """

    max_results: int = Field(default=5, ge=0, le=20)
    search_depth: Depth = "basic"

    _null_depth = field_validator("search_depth", mode="before")(_basic_when_null)


class WebFetch(BaseToolParam):
    """``web_fetch``: the relevant parts of given pages.

    Attributes:
        chunks_per_source: Default chunks kept per page (1 to 5).
        timeout: Default timeout in seconds (1 to 60).
        extract_depth: Default depth, ``basic`` or ``advanced``.
    """

    chunks_per_source: int = Field(default=3, ge=1, le=5)
    timeout: float = Field(default=30, ge=1, le=60)
    extract_depth: Depth = "basic"

    _null_depth = field_validator("extract_depth", mode="before")(_basic_when_null)


class WebCrawl(BaseToolParam):
    """``web_crawl``: pages of a site relevant to instructions.

    Attributes:
        timeout: Default timeout in seconds (10 to 150).
        max_depth: Default link depth (1 to 5), None for Tavily's own.
        max_breadth: Default links followed per page (1 to 500), None for Tavily's own.
        limit: Default cap on pages (at least 1), None for Tavily's own.
        extract_depth: Default depth, ``basic`` or ``advanced``.
    """

    timeout: float = Field(default=150, ge=10, le=150)
    max_depth: int | None = Field(default=None, ge=1, le=5)
    max_breadth: int | None = Field(default=None, ge=1, le=500)
    limit: int | None = Field(default=None, ge=1)
    extract_depth: Depth = "basic"

    _null_depth = field_validator("extract_depth", mode="before")(_basic_when_null)


def _check_range(name: str, value: float | None, low: float, high: float | None) -> None:
    if value is None:
        return
    if value < low or (high is not None and value > high):
        bounds = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
        raise RetriableError(f"{name} must be {bounds}; got {value}.")


def _check_text(name: str, value: str) -> None:
    if not value.strip():
        raise RetriableError(f"{name} must not be blank.")


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RetriableError(f"every URL must be an absolute http(s) URL; got {url[:200]!r}.")


def _check_depth(name: str, value: str) -> None:
    if value not in ("basic", "advanced"):
        raise RetriableError(f"{name} must be 'basic' or 'advanced'; got {value!r}.")


def _call_tavily(tool: str, method: str, *args: Any, **kwargs: Any) -> dict[str, Any] | str:
    """Run one Tavily request with a fresh client; a failure becomes a sentence."""
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        return (
            f"{tool} cannot run: the {KEY_VARIABLE} environment variable is empty or missing. "
            "Retrying will not help until someone sets it."
        )
    from tavily import TavilyClient  # type: ignore[import-untyped]

    base = os.environ.get(BASE_URL_VARIABLE, "").strip() or DEFAULT_BASE_URL
    client = TavilyClient(api_key=key, api_base_url=base)
    try:
        result: dict[str, Any] = getattr(client, method)(*args, **kwargs)
    except Exception as error:  # any client failure is reported to the model, not raised
        logger.warning("%s failed: %s: %s", tool, type(error).__name__, error)
        return (
            f"{tool} failed: {type(error).__name__}: {error}. The Tavily key may be invalid or "
            "the service unavailable."
        )
    finally:
        client.close()
    return result


class SearchTool(ToolCard):
    """Web research through Tavily: search, fetch (extract) and crawl.

    Needs ``TAVILY_API_KEY`` in the environment (read on each call). Example YAML::

        tools:
          - card: search
            web_search: {max_results: 3}
            web_crawl: false
    """

    web_search: WebSearch | bool = True
    web_fetch: WebFetch | bool = True
    web_crawl: WebCrawl | bool = True

    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        search = self._param(self.web_search, WebSearch, TOOL_CALL)
        fetch = self._param(self.web_fetch, WebFetch, TOOL_CALL)
        crawl = self._param(self.web_crawl, WebCrawl, TOOL_CALL)
        serving = search is not None or fetch is not None or crawl is not None
        if serving and not os.environ.get(KEY_VARIABLE, "").strip():
            logger.warning(
                "SearchTool: %s is not set; its tools will answer that they cannot run",
                KEY_VARIABLE,
            )
        if search is not None:
            tools.append(search.apply_instructions(_build_search(search)))
        if fetch is not None:
            tools.append(fetch.apply_instructions(_build_fetch(fetch)))
        if crawl is not None:
            tools.append(crawl.apply_instructions(_build_crawl(crawl)))
        return tools


def _build_search(param: WebSearch) -> Callable[..., dict[str, Any] | str]:
    def web_search(
        query: str,
        max_results: Annotated[int, Field(ge=0, le=20)] = param.max_results,
        search_depth: Depth = param.search_depth,
    ) -> dict[str, Any] | str:
        """Search the web: returns sources (title, URL) with short snippets.

        Snippets are only a hint: call web_fetch on the URLs worth reading.

        Args:
            query: What to search for (required, not blank).
            max_results: How many results, from 0 to 20.
            search_depth: 'basic' or 'advanced' (slower, more thorough).
        """
        _check_text("query", query)
        _check_range("max_results", max_results, 0, 20)
        _check_depth("search_depth", search_depth)
        return _call_tavily(
            "web_search", "search", query, max_results=max_results, search_depth=search_depth
        )

    return web_search


def _build_fetch(param: WebFetch) -> Callable[..., dict[str, Any] | str]:
    def web_fetch(
        urls: Annotated[list[str], Field(min_length=1, max_length=20)],
        query: str,
        chunks_per_source: Annotated[int, Field(ge=1, le=5)] = param.chunks_per_source,
        timeout: Annotated[float, Field(ge=1, le=60)] = param.timeout,
        extract_depth: Depth = param.extract_depth,
    ) -> dict[str, Any] | str:
        """Read web pages: returns the parts of each page relevant to the query, as markdown.

        Args:
            urls: 1 to 20 absolute http(s) URLs (for example from web_search).
            query: What you are looking for in them (required, not blank).
            chunks_per_source: Relevant chunks kept per page, from 1 to 5.
            timeout: Seconds to wait, from 1 to 60.
            extract_depth: 'basic' or 'advanced' (slower, handles harder pages).
        """
        if not 1 <= len(urls) <= 20:
            raise RetriableError(f"urls must hold 1 to 20 URLs; got {len(urls)}.")
        for url in urls:
            _check_url(url)
        _check_text("query", query)
        _check_range("chunks_per_source", chunks_per_source, 1, 5)
        _check_range("timeout", timeout, 1, 60)
        _check_depth("extract_depth", extract_depth)
        return _call_tavily(
            "web_fetch",
            "extract",
            urls,
            query=query,
            chunks_per_source=chunks_per_source,
            timeout=timeout,
            extract_depth=extract_depth,
            format="markdown",
        )

    return web_fetch


def _build_crawl(param: WebCrawl) -> Callable[..., dict[str, Any] | str]:
    def web_crawl(
        url: str,
        crawl_instructions: str,
        timeout: Annotated[float, Field(ge=10, le=150)] = param.timeout,
        max_depth: Annotated[int | None, Field(ge=1, le=5)] = param.max_depth,
        max_breadth: Annotated[int | None, Field(ge=1, le=500)] = param.max_breadth,
        limit: Annotated[int | None, Field(ge=1)] = param.limit,
        extract_depth: Depth = param.extract_depth,
    ) -> dict[str, Any] | str:
        """Crawl a site from a URL: returns the pages relevant to your instructions, as markdown.

        Args:
            url: Absolute http(s) URL to start from.
            crawl_instructions: Which pages or content you want (required, not blank).
            timeout: Seconds to wait, from 10 to 150.
            max_depth: Link depth to follow, from 1 to 5 (leave unset for the default).
            max_breadth: Links followed per page, from 1 to 500 (unset for the default).
            limit: Most pages to return, at least 1 (unset for the default).
            extract_depth: 'basic' or 'advanced'.
        """
        _check_url(url)
        _check_text("crawl_instructions", crawl_instructions)
        _check_range("timeout", timeout, 10, 150)
        _check_range("max_depth", max_depth, 1, 5)
        _check_range("max_breadth", max_breadth, 1, 500)
        _check_range("limit", limit, 1, None)
        _check_depth("extract_depth", extract_depth)
        bounds = {
            key: value
            for key, value in (
                ("max_depth", max_depth),
                ("max_breadth", max_breadth),
                ("limit", limit),
            )
            if value is not None
        }
        return _call_tavily(
            "web_crawl",
            "crawl",
            url,
            instructions=crawl_instructions,
            timeout=timeout,
            extract_depth=extract_depth,
            format="markdown",
            **bounds,
        )

    return web_crawl
