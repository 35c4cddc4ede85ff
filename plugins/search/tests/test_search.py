"""SearchTool with the real tavily-python client against a loopback server speaking its API.

The server is ``http.server`` on 127.0.0.1; the client reaches it through
``AKGENTIC_TAVILY_BASE_URL``. It records every request and answers canned JSON or an
error status, so nothing is patched and nothing leaves the machine.
"""

from __future__ import annotations

import inspect
import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from akgentic_search import SearchTool, WebCrawl, WebFetch, WebSearch
from pydantic import ValidationError

from akgentic.tool import RetriableError, ToolCard

CANNED = {"query": "q", "results": [{"title": "T", "url": "https://a.example", "content": "s"}]}


@dataclass
class FakeTavily:
    """What the fake received and what it answers next."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] = field(default_factory=lambda: dict(CANNED))
    url: str = ""


def _handler(fake: FakeTavily) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length) or b"{}")
            fake.requests.append(
                {"path": self.path, "headers": dict(self.headers), "body": payload}
            )
            data = json.dumps(fake.body).encode()
            self.send_response(fake.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTavily]:
    recorded = FakeTavily()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorded))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    host, port = server.server_address[:2]
    recorded.url = f"http://{host!s}:{port}"
    monkeypatch.setenv("AKGENTIC_TAVILY_BASE_URL", recorded.url)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield recorded
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def tools(card: SearchTool) -> dict[str, Any]:
    return {tool.__name__: tool for tool in card.get_tools()}


def test_without_a_key_every_tool_says_it_cannot_run_and_sends_nothing(
    fake: FakeTavily, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY")
    with caplog.at_level(logging.WARNING, logger="akgentic_search"):
        served = tools(SearchTool())
    assert sorted(served) == ["web_crawl", "web_fetch", "web_search"]
    assert len(caplog.records) == 1
    results = [
        served["web_search"]("q"),
        served["web_fetch"](["https://a.example"], "pricing"),
        served["web_crawl"]("https://a.example", "auth section"),
    ]
    for name, result in zip(["web_search", "web_fetch", "web_crawl"], results, strict=True):
        assert result == (
            f"{name} cannot run: the TAVILY_API_KEY environment variable is empty or missing. "
            "Retrying will not help until someone sets it."
        )
    assert fake.requests == []


def test_search_sends_the_configured_defaults_and_returns_tavilys_object(fake: FakeTavily) -> None:
    search = tools(SearchTool(web_search=WebSearch(max_results=3)))["web_search"]
    assert inspect.signature(search).parameters["max_results"].default == 3
    assert search("q") == CANNED
    (request,) = fake.requests
    assert request["path"] == "/search"
    assert request["headers"]["Authorization"] == "Bearer tvly-test-key"
    assert request["body"] == {"query": "q", "max_results": 3, "search_depth": "basic"}


def test_crawl_and_fetch_send_markdown_and_omit_unset_bounds(fake: FakeTavily) -> None:
    served = tools(SearchTool())
    served["web_crawl"]("https://docs.example", "auth section")
    served["web_fetch"](["https://a.example/p"], "pricing")
    crawl, fetch = (r["body"] for r in fake.requests)
    assert [r["path"] for r in fake.requests] == ["/crawl", "/extract"]
    assert crawl["instructions"] == "auth section"
    assert (crawl["format"], crawl["timeout"], crawl["extract_depth"]) == ("markdown", 150, "basic")
    assert not {"max_depth", "max_breadth", "limit"} & set(crawl)
    assert (fetch["query"], fetch["chunks_per_source"], fetch["timeout"]) == ("pricing", 3, 30)
    assert fetch["format"] == "markdown" and fetch["urls"] == ["https://a.example/p"]


@pytest.mark.parametrize("status", [401, 429, 500])
def test_a_tavily_error_status_becomes_a_sentence_and_a_warning(
    fake: FakeTavily, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    fake.status = status
    fake.body = {"detail": {"error": "no luck"}}
    with caplog.at_level(logging.WARNING, logger="akgentic_search"):
        result = tools(SearchTool())["web_search"]("q")
    assert isinstance(result, str) and result.startswith("web_search failed: ")
    assert result.endswith("The Tavily key may be invalid or the service unavailable.")
    assert any("web_search failed" in r.getMessage() for r in caplog.records)


def test_a_closed_port_becomes_a_sentence(
    fake: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("AKGENTIC_TAVILY_BASE_URL", f"http://127.0.0.1:{port}")
    result = tools(SearchTool())["web_search"]("q")
    assert isinstance(result, str) and result.startswith("web_search failed: ")


@pytest.mark.parametrize(
    ("tool", "args", "rule"),
    [
        ("web_search", ("q",), {"max_results": 50}),
        ("web_search", ("   ",), {}),
        ("web_fetch", (["https://a.example"], "q"), {"chunks_per_source": 15}),
        ("web_fetch", (["ftp://a.example/f"], "q"), {}),
        ("web_fetch", ([], "q"), {}),
        ("web_fetch", (["https://a.example"] * 21, "q"), {}),
        ("web_fetch", (["https://a.example"], " "), {}),
        ("web_crawl", ("https://a.example", "x"), {"timeout": 5}),
        ("web_crawl", ("https://a.example", "  "), {}),
        ("web_crawl", ("https://a.example", "x"), {"max_depth": 9}),
        ("web_crawl", ("javascript:alert(1)", "x"), {}),
    ],
)
def test_out_of_range_or_hostile_arguments_are_refused_before_any_request(
    fake: FakeTavily, tool: str, args: tuple[Any, ...], rule: dict[str, Any]
) -> None:
    with pytest.raises(RetriableError):
        tools(SearchTool())[tool](*args, **rule)
    assert fake.requests == []


@pytest.mark.parametrize(
    ("param", "data"),
    [
        (WebCrawl, {"max_depth": 9}),
        (WebFetch, {"chunks_per_source": 0}),
        (WebFetch, {"chunks_per_source": 15}),
        (WebSearch, {"max_results": -1}),
        (WebSearch, {"unknown": 1}),
        (WebCrawl, {"timeout": 5}),
    ],
)
def test_params_outside_tavilys_ranges_are_refused_when_the_card_loads(
    param: type[Any], data: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        param.model_validate(data)


def test_a_stored_null_depth_reads_as_basic() -> None:
    assert WebSearch.model_validate({"search_depth": None}).search_depth == "basic"


def test_a_switched_off_tool_is_not_served_and_instructions_stay_in_the_docstring(
    fake: FakeTavily,
) -> None:
    card = SearchTool(web_crawl=False, web_fetch=WebFetch(instructions="Only official docs."))
    served = tools(card)
    assert sorted(served) == ["web_fetch", "web_search"]
    doc = served["web_fetch"].__doc__ or ""
    # The instructions go before the Args: section, so argument descriptions survive.
    assert "Only official docs." in doc
    assert doc.index("Only official docs.") < doc.index("Args:")
    served["web_fetch"](["https://a.example"], "q")
    assert "Only official docs." not in json.dumps(fake.requests[0]["body"])


def test_docstrings_name_the_real_tools() -> None:
    served = tools(SearchTool())
    assert "web_fetch" in (served["web_search"].__doc__ or "")
    assert "web_search" in (served["web_fetch"].__doc__ or "")


def test_the_card_round_trips_by_name() -> None:
    card = SearchTool(web_search=WebSearch(max_results=3), web_crawl=False)
    assert ToolCard.model_validate(card.model_dump()) == card
