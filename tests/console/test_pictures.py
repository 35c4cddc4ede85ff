"""The console's pictures, built from hand-written logs: the graph, the usage chart, the timeline.

Each SVG document is parsed as XML (as the page's DOMParser does), so a test sees
what the browser sees: elements, attributes and text, never the raw markup.
"""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from types import SimpleNamespace
from typing import Any

import pytest

from akgentic.console.pictures import (
    card_budget,
    chart_budget,
    graph_data,
    graph_svg,
    picture_svg,
    scan_log,
    team_pictures,
    timeline_data,
    timeline_svg,
    usage_data,
    usage_svg,
)
from akgentic.console.pictures.graph import graph_layout
from akgentic.console.pictures.svg import fmt
from akgentic.testing.team_log import TeamLog

NS = "{http://www.w3.org/2000/svg}"
#: Every element a picture may contain (the page copies only these).
ALLOWED = {"svg", "g", "line", "polyline", "rect", "circle", "text", "title"}


def _svg(markup: str) -> ET.Element:
    root = ET.fromstring(markup)
    assert root.tag == f"{NS}svg"
    return root


def _find(root: ET.Element, tag: str, cls: str | None = None) -> list[ET.Element]:
    found = root.iter(f"{NS}{tag}")
    if cls is None:
        return list(found)
    return [e for e in found if cls in (e.get("class") or "").split()]


def _by(elements: list[ET.Element], attribute: str) -> dict[str, ET.Element]:
    return {str(e.get(attribute)): e for e in elements}


def _title(element: ET.Element) -> str:
    title = element.find(f"{NS}title")
    assert title is not None
    return title.text or ""


def _small_team() -> tuple[TeamLog, dict[str, Any]]:
    log = TeamLog()
    human = log.member("@Human", human=True)
    manager = log.member("@Manager")
    tool = log.tool_actor("#PlanningTool")
    researcher = log.member("@Researcher1", "Researcher", hired_by=manager)
    for _ in range(3):
        log.send(human, manager, "hello")
    for _ in range(2):
        log.send(manager, human, "hi", "response")
    log.send(manager, researcher, "look into it")
    log.send(manager, tool, "update")  # a tool actor is no member: no edge
    return log, {"human": human, "manager": manager, "researcher": researcher}


# -- the graph -----------------------------------------------------------------------


def test_the_graph_has_a_node_per_member_and_none_for_tool_actors_or_the_orchestrator() -> None:
    log, _ = _small_team()
    data = graph_data(scan_log(log.messages))
    assert [m["name"] for m in data["members"]] == ["@Human", "@Manager", "@Researcher1"]
    nodes = _by(_find(_svg(graph_svg(data)), "g", "node"), "data-member")
    assert set(nodes) == {"@Human", "@Manager", "@Researcher1"}
    assert "human" in (nodes["@Human"].get("class") or "")
    assert _title(nodes["@Manager"]) == "@Manager · Manager · sent 3, received 3"


def test_edges_join_members_and_are_weighted_by_the_messages_sent_both_ways() -> None:
    log, _ = _small_team()
    data = graph_data(scan_log(log.messages))
    edges = {(e["source_name"], e["target_name"]): e for e in data["edges"]}
    assert set(edges) == {("@Human", "@Manager"), ("@Manager", "@Researcher1")}
    pair = edges[("@Human", "@Manager")]
    assert (pair["forward"], pair["backward"], pair["count"]) == (3, 2, 5)
    assert edges[("@Manager", "@Researcher1")]["count"] == 1
    drawn = _find(_svg(graph_svg(data)), "g", "edge")
    counts = {e.get("data-count"): e for e in drawn}
    assert set(counts) == {"5", "1"}
    width = {c: float(_find(e, "line")[0].get("stroke-width") or 0) for c, e in counts.items()}
    assert width["5"] > width["1"] == 1.0
    assert [t.text for t in _find(counts["5"], "text")] == ["5"]
    assert _title(counts["5"]) == "@Human → @Manager: 3 · @Manager → @Human: 2"


def test_a_hire_sits_on_a_ring_outside_its_hirer_and_is_linked_to_it() -> None:
    log, who = _small_team()
    log.stop(who["researcher"])
    data = graph_data(scan_log(log.messages))
    hire = data["members"][2]
    assert (hire["hired_by"], hire["parent"]) == ("@Manager", str(who["manager"].agent_id))
    assert data["members"][1]["hired_by"] is None  # started by the orchestrator: no hire
    where, _radius = graph_layout(data["members"])
    distance = {m["name"]: math.dist((0, 0), where[m["id"]]) for m in data["members"]}
    assert distance["@Researcher1"] > distance["@Manager"]
    root = _svg(graph_svg(data))
    links = _find(root, "line", "hire")
    assert len(links) == 1
    x, y = where[hire["id"]]
    assert (links[0].get("x2"), links[0].get("y2")) == (fmt(x), fmt(y))
    node = _by(_find(root, "g", "node"), "data-member")["@Researcher1"]
    assert "stopped" in (node.get("class") or "").split()
    assert "hired by @Manager" in _title(node)


def test_hires_sit_together_by_their_hirer_one_ring_further_out() -> None:
    from akgentic.console.pictures.graph import RING_GAP

    log = TeamLog()
    log.member("@Human", human=True)
    manager = log.member("@Manager")
    analyst = log.member("@Analyst")
    researchers = [log.member(f"@R{i}", "Researcher", hired_by=manager) for i in range(40)]
    for index, researcher in enumerate(researchers):
        log.member(f"@D{index}", "Developer", hired_by=researcher)
    log.member("@A1", "Assistant", hired_by=analyst)
    data = graph_data(scan_log(log.messages))
    where, _radius = graph_layout(data["members"])
    at = {m["name"]: where[m["id"]] for m in data["members"]}

    def angle(name: str) -> float:
        return math.atan2(at[name][1], at[name][0])

    # Around the ring of the first hires, the manager's hires are one arc: the owner
    # changes twice (into the analyst's hire and back), however many hires there are.
    ring = sorted([*(f"@R{i}" for i in range(40)), "@A1"], key=angle)
    owners = ["A" if name == "@A1" else "M" for name in ring]
    assert sum(owners[i] != owners[i - 1] for i in range(len(owners))) == 2
    # A member with one hire has it straight out; each developer is nearest its researcher.
    assert angle("@A1") == pytest.approx(angle("@Analyst"))
    for index in range(40):
        nearest = min(range(40), key=lambda j: math.dist(at[f"@D{index}"], at[f"@R{j}"]))
        assert nearest == index
    # The first members are the inner ring, each ring of hires further out.
    first = max(math.dist((0, 0), at[m]) for m in ("@Human", "@Manager", "@Analyst"))
    hired = [math.dist((0, 0), at[f"@R{i}"]) for i in range(40)]
    developers = [math.dist((0, 0), at[f"@D{i}"]) for i in range(40)]
    assert min(hired) - first >= RING_GAP - 1e-6
    assert min(developers) - max(hired) >= RING_GAP - 1e-6


def test_a_hire_appears_in_the_graph_of_the_log_that_records_it() -> None:
    log, who = _small_team()
    before = graph_data(scan_log(log.messages))
    log.member("@Researcher2", "Researcher", hired_by=who["manager"])
    after = graph_data(scan_log(log.messages))
    assert len(after["members"]) == len(before["members"]) + 1
    assert after["members"][-1]["hired_by"] == "@Manager"


def test_a_thousand_member_graph_places_every_member_apart_and_leaves_names_to_tooltips() -> None:
    log = TeamLog()
    members = [log.member("@Lead")]
    for index in range(1, 1_000):
        hirer = members[(index - 1) // 3]
        members.append(log.member(f"@M{index}", "Member", hired_by=hirer))
        log.send(hirer, members[-1])
        log.send(members[-1], hirer, intent="response")
    data = graph_data(scan_log(log.messages))
    assert len(data["members"]) == 1_000 and len(data["edges"]) == 999
    where, _radius = graph_layout(data["members"])
    assert len({(round(x), round(y)) for x, y in where.values()}) == 1_000
    root = _svg(graph_svg(data))
    nodes = _find(root, "g", "node")
    assert len(nodes) == 1_000
    assert _find(nodes[0], "text") == [] and _title(nodes[0]).startswith("@Lead")
    assert root.get("data-members") == "1000"


def test_an_empty_log_draws_empty_pictures() -> None:
    pictures = team_pictures([])
    for name in ("graph", "usage", "timeline"):
        root = _svg(pictures[name]["svg"])
        assert _find(root, "text", "empty"), name
    assert pictures["graph"]["members"] == 0 and pictures["usage"]["budget"] is None


# -- the usage chart -----------------------------------------------------------------


def _usage_log() -> TeamLog:
    log = TeamLog()
    log.member("@Human", human=True)
    manager = log.member("@Manager")
    researcher = log.member("@Researcher")
    log.tick(1)
    log.usage(manager, 100, 20, usd=0.01)
    log.tick(1)
    log.usage(researcher, 50, 10, usd=0.002)
    log.tick(1)
    log.usage(manager, 200, 40, usd=0.03)
    return log


def test_usage_series_are_cumulative_per_member_and_for_the_team() -> None:
    data = usage_data(scan_log(_usage_log().messages))
    members = {m["name"]: m for m in data["members"]}
    assert list(members) == ["@Manager", "@Researcher"]  # the human used no model
    assert [p[1:] for p in members["@Manager"]["points"]] == [[120, 0.01], [360, 0.04]]
    assert members["@Researcher"]["total_tokens"] == 60
    assert data["team"]["total_tokens"] == 420
    assert data["team"]["usd"] == pytest.approx(0.042)
    times = [p[0] for p in data["team"]["points"]]
    assert times == sorted(times) and times[-1] == data["duration"]
    root = _svg(usage_svg(data))
    series = _find(root, "g", "series")
    assert [s.get("data-member") for s in series] == ["@Manager", "@Researcher", None]
    assert "team" in (series[-1].get("class") or "")
    assert len(_find(series[0], "polyline")) == 2  # tokens and USD
    assert _find(root, "g", "budget") == []
    assert _title(series[0]) == "@Manager: 360 tokens · $0.0400"


def _line_y(group: ET.Element) -> float:
    line = _find(group, "line")[0]
    assert line.get("y1") == line.get("y2")
    return float(line.get("y1") or "nan")


def test_the_budget_line_is_drawn_from_the_budget_the_chart_is_fed() -> None:
    from akgentic.console.pictures import usage as chart

    data = usage_data(scan_log(_usage_log().messages), {"usd": 1.0, "total_tokens": 50_000})
    assert data["budget"] == {"usd": 1.0, "total_tokens": 50_000}
    lines = _by(_find(_svg(usage_svg(data)), "g", "budget"), "data-unit")
    assert set(lines) == {"usd", "total_tokens"}
    # The limit is above what was spent: the scale reaches it (8% headroom).
    top, height = chart._TOP, chart._TOKENS_H
    assert _line_y(lines["total_tokens"]) == pytest.approx(top + height * (1 - 1 / 1.08), abs=0.1)
    assert [t.text for t in _find(lines["usd"], "text")] == ["budget $1.00"]
    # The same JSON with another budget injected at the seam: only that line.
    fed = {**data, "budget": {"total_tokens": 210}}
    lines = _by(_find(_svg(usage_svg(fed)), "g", "budget"), "data-unit")
    assert set(lines) == {"total_tokens"}
    # Spent (420) is above the limit: the scale is the spending's, the line below half of it.
    expected = top + height * (1 - 210 / (420 * 1.08))
    assert _line_y(lines["total_tokens"]) == pytest.approx(expected, abs=0.1)
    assert [t.text for t in _find(lines["total_tokens"], "text")] == ["budget 210 tokens"]


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        {"usd": -1, "total_tokens": 0},
        {"usd": float("nan"), "total_tokens": float("inf")},
        {"usd": "1.0", "total_tokens": True},
        "1.0",
    ],
)
def test_a_budget_without_a_finite_positive_limit_draws_no_line(value: object) -> None:
    assert chart_budget(value) is None
    data = usage_data(scan_log(_usage_log().messages))
    assert _find(_svg(usage_svg({**data, "budget": value})), "g", "budget") == []


def test_chart_budget_reads_a_mapping_a_model_or_an_object() -> None:
    from pydantic import BaseModel

    class Limits(BaseModel):
        usd: float | None = None
        total_tokens: int | None = None
        requests: int = 10  # not drawn

    assert chart_budget(Limits(usd=2.5)) == {"usd": 2.5}
    assert chart_budget(SimpleNamespace(total_tokens=1_000)) == {"total_tokens": 1_000}
    assert chart_budget({"usd": 3, "total_tokens": 1e6}) == {"usd": 3.0, "total_tokens": 1_000_000}


def test_the_default_budget_source_reads_the_team_cards_budget_when_it_has_one() -> None:
    from akgentic.team.card_yaml import parse_team_card
    from akgentic.testing.cards import human_worker_team_yaml

    text = human_worker_team_yaml("t", model_cfg={"provider": "openai", "model": "gpt-4.1-mini"})
    card = parse_team_card(text, "t.yaml")
    process: Any = SimpleNamespace(team_card=card)
    assert card_budget(process, []) is None  # cards carry no budget yet
    process = SimpleNamespace(team_card=SimpleNamespace(budget={"usd": 4.0}))
    assert card_budget(process, []) == {"usd": 4.0}


# -- the timeline --------------------------------------------------------------------


def test_turns_tool_calls_and_responses_are_drawn_in_each_members_strip() -> None:
    from akgentic.console.pictures import timeline as strip

    log = TeamLog()
    human = log.member("@Human", human=True)
    manager = log.member("@Manager")
    researcher = log.member("@Researcher", hired_by=manager)
    asked = log.send(human, manager, "hello")
    log.received(manager, asked)
    log.tick(1)
    log.tool_call(manager, "update_planning", "c1")
    log.tick(1)
    log.tool_return(manager, "update_planning", "c1")
    log.tool_call(manager, "search", "c2")
    log.tool_return(manager, "search", "c2", success=False)
    log.usage(manager, 10, 5)
    delegated = log.send(manager, researcher, "look")
    log.processed(manager, asked)
    log.received(researcher, delegated)
    log.tool_call(researcher, "search", "c3")
    log.tick(2)  # the researcher's turn and its tool call are still running at the end
    log.send(human, manager, "still there?")
    data = timeline_data(scan_log(log.messages))
    rows = {m["name"]: m for m in data["members"]}
    assert list(rows) == ["@Human", "@Manager", "@Researcher"]
    [turn] = rows["@Manager"]["turns"]
    assert turn[2] == "@Human" and turn[1] - turn[0] > 2
    assert [(t[2], t[3]) for t in rows["@Manager"]["tools"]] == [
        ("update_planning", True),
        ("search", False),
    ]
    assert rows["@Researcher"]["turns"][0][1] is None
    assert len(rows["@Manager"]["responses"]) == 1

    root = _svg(timeline_svg(data))
    strips = _by(_find(root, "g", "row"), "data-member")
    manager_strip, researcher_strip = strips["@Manager"], strips["@Researcher"]
    [bar] = _find(manager_strip, "rect", "turn")
    plot = strip._WIDTH - strip._LABELS - strip._RIGHT
    duration = data["duration"]
    assert float(bar.get("x") or 0) == pytest.approx(
        strip._LABELS + plot * turn[0] / duration, abs=0.1
    )
    assert float(bar.get("width") or 0) == pytest.approx(
        plot * (turn[1] - turn[0]) / duration, abs=0.1
    )
    assert "@Manager: turn on a message from @Human" in _title(bar)
    tools = _find(manager_strip, "rect", "tool")
    assert [(t.get("data-tool"), t.get("class")) for t in tools] == [
        ("update_planning", "tool ok"),
        ("search", "tool failed"),
    ]
    [open_turn] = _find(researcher_strip, "rect", "turn")
    assert "open" in (open_turn.get("class") or "").split()
    end = float(open_turn.get("x") or 0) + float(open_turn.get("width") or 0)
    assert end == pytest.approx(strip._LABELS + plot, abs=0.2)
    assert _find(researcher_strip, "rect", "open")[-1].get("data-tool") == "search"
    assert len(_find(manager_strip, "line", "response")) == 1
    assert _find(strips["@Human"], "rect", "turn") == []


# -- hostile names -------------------------------------------------------------------

HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '"><svg onload="window.__pwned = 2">',
    "' onmouseover='window.__pwned = 3",
    "@A\x01B\ud800C&amp;",
]


def _hostile_log() -> TeamLog:
    log = TeamLog()
    members = [log.member(name, name) for name in HOSTILE]
    for member in members:
        log.usage(member, 10, 10)
    for sender, recipient in itertools.pairwise(members):
        log.send(sender, recipient, "</text><script>alert(1)</script>")
        log.received(recipient, log.send(sender, recipient))
        log.tool_call(recipient, HOSTILE[0], "c")
    return log


@pytest.mark.parametrize("name", ["graph", "usage", "timeline"])
def test_hostile_member_and_tool_names_are_text_in_every_picture(name: Any) -> None:
    markup = picture_svg(name, _hostile_log().messages, {"usd": 1.0})
    assert "<script" not in markup and "<svg onload" not in markup
    root = _svg(markup)  # well formed: the control character and the surrogate are replaced
    for element in root.iter():
        assert element.tag.removeprefix(NS) in ALLOWED
        assert not any(attr.lower().startswith("on") for attr in element.attrib)
    texts = {t.text for t in root.iter(f"{NS}text")} | {t.text for t in root.iter(f"{NS}title")}
    shown = " ".join(t for t in texts if t)
    assert HOSTILE[0] in shown  # whole in the tooltips (labels may be clipped)
    assert "@A\ufffdB\ufffdC&amp;" in shown
    members = {e.get("data-member") for e in root.iter() if e.get("data-member")}
    assert HOSTILE[1] in members


def test_a_long_log_draws_bars_and_steps_less_than_a_pixel_apart_as_one() -> None:
    log = TeamLog()
    human = log.member("@Human", human=True)
    manager = log.member("@Manager")
    for _ in range(2_000):
        asked = log.send(human, manager, "again")
        log.received(manager, asked)
        log.usage(manager, 10, 10)
        log.processed(manager, asked)
    log.tick(400)  # the last turn, long after: a bar of its own
    asked = log.send(human, manager, "later")
    log.received(manager, asked)
    log.processed(manager, asked)
    scan = scan_log(log.messages)
    row = _by(_find(_svg(timeline_svg(timeline_data(scan))), "g", "row"), "data-member")
    bars = _find(row["@Manager"], "rect", "turn")
    assert [b.get("data-count") for b in bars] == ["2000", None]
    assert _title(bars[0]).startswith("@Manager: 2000 turns, ")
    assert len(_find(row["@Manager"], "line", "response")) < 100
    [tokens, _usd] = _find(_svg(usage_svg(usage_data(scan))), "polyline")[:2]
    corners = (tokens.get("points") or "").split()
    # 2,000 responses over the first sixth of the time axis (about 92 of its 554
    # pixels): two corners a pixel at most, not two a response.
    assert 100 < len(corners) <= 2 * 100
