"""The pictures API: a real team run on the scripted model, pictured from its stored log."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest

from akgentic.console.pictures import ChartBudget
from akgentic.console.server import ConsoleThread
from akgentic.testing.console import StreamReader, running_console

NS = "{http://www.w3.org/2000/svg}"


def _classed(markup: str, tag: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(markup)
    return [e for e in root.iter(f"{NS}{tag}") if cls in (e.get("class") or "").split()]


@pytest.fixture
def talked(store_url: str, card_text: str) -> Iterator[tuple[ConsoleThread, httpx.Client, str]]:
    """A console whose team answered one message from the human (its id)."""
    with running_console(store_url) as (server, client):
        created = client.post("/api/teams", json={"card": card_text})
        assert created.status_code == 201, created.text
        team_id: str = created.json()["team_id"]
        reader = StreamReader(client, team_id)
        try:
            client.post(f"/api/teams/{team_id}/messages", json={"text": "hello"})
            reader.wait_for(lambda row: (row["content"] or "").startswith("Echo: hello"))
        finally:
            reader.close()
        yield server, client, team_id


def test_the_pictures_of_a_team_that_talked_show_its_members_messages_usage_and_turns(
    talked: tuple[ConsoleThread, httpx.Client, str],
) -> None:
    _server, client, team_id = talked
    answer = client.get(f"/api/teams/{team_id}/pictures")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert set(found) == {"graph", "usage", "timeline"}
    nodes = {e.get("data-member") for e in _classed(found["graph"]["svg"], "g", "node")}
    assert nodes == {"@Human", "@Manager"}
    [edge] = _classed(found["graph"]["svg"], "g", "edge")
    assert int(edge.get("data-count") or 0) >= 2  # the question and its answer
    assert (found["graph"]["members"], found["graph"]["edges"]) == (2, 1)
    series = {e.get("data-member") for e in _classed(found["usage"]["svg"], "g", "series")}
    assert "@Manager" in series
    assert found["usage"]["budget"] is None
    assert _classed(found["usage"]["svg"], "g", "budget") == []
    rows = {e.get("data-member"): e for e in _classed(found["timeline"]["svg"], "g", "row")}
    # The turn may still be open (its end can be reported with the member's next event).
    turns = [e for e in rows["@Manager"].iter(f"{NS}rect") if "turn" in (e.get("class") or "")]
    assert len(turns) == 1


def test_a_budget_given_at_the_seam_is_drawn_and_a_broken_source_costs_only_the_line(
    talked: tuple[ConsoleThread, httpx.Client, str],
) -> None:
    server, client, team_id = talked
    assert server.console is not None
    service = server.console.service

    def limits(process: Any, messages: Sequence[Any]) -> ChartBudget:
        assert str(process.team_id) == team_id and messages
        return {"usd": 0.5, "total_tokens": 100_000}

    service.budget_of = limits
    usage = client.get(f"/api/teams/{team_id}/pictures").json()["usage"]
    assert usage["budget"] == {"usd": 0.5, "total_tokens": 100_000}
    units = {e.get("data-unit") for e in _classed(usage["svg"], "g", "budget")}
    assert units == {"usd", "total_tokens"}

    def broken(process: Any, messages: Sequence[Any]) -> None:
        raise RuntimeError("no budget store")

    service.budget_of = broken
    usage = client.get(f"/api/teams/{team_id}/pictures").json()["usage"]
    assert usage["budget"] is None and _classed(usage["svg"], "g", "series")


def test_one_picture_is_served_as_svg_behind_the_consoles_checks(
    talked: tuple[ConsoleThread, httpx.Client, str],
) -> None:
    server, client, team_id = talked
    for name in ("graph", "usage", "timeline"):
        answer = client.get(f"/api/teams/{team_id}/pictures/{name}.svg")
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("image/svg+xml")
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert ET.fromstring(answer.text).tag == f"{NS}svg"
    assert client.get(f"/api/teams/{team_id}/pictures/other.svg").status_code == 422
    unknown = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/api/teams/{unknown}/pictures").status_code == 404
    with httpx.Client(base_url=server.url) as anonymous:
        assert anonymous.get(f"/api/teams/{team_id}/pictures").status_code == 401
        assert anonymous.get(f"/api/teams/{team_id}/pictures/graph.svg").status_code == 401
        foreign = {"Authorization": f"Bearer {server.token}", "Host": "attacker.example"}
        assert anonymous.get(f"/api/teams/{team_id}/pictures", headers=foreign).status_code == 403
