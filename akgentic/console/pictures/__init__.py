"""Pictures of a team for the console: its graph, its usage chart and its timeline.

Each picture is computed from the team's log alone (the stored events, and the
same messages as they stream), as plain JSON data first and then as an SVG
document built here, in Python, with every label escaped:

- :mod:`~akgentic.console.pictures.graph`: members as nodes, messages between
  them as edges weighted by count, hires linked to their hirer;
- :mod:`~akgentic.console.pictures.usage`: tokens and estimated cost over time,
  per member and for the team, with the budget line when the data has a budget;
- :mod:`~akgentic.console.pictures.timeline`: a strip per member of its turns,
  tool calls and model responses.

:mod:`~akgentic.console.pictures.scan` reads the log once for all three;
:mod:`~akgentic.console.pictures.svg` is the escaping SVG writer. The page fetches
the three documents and redraws them when the team's event stream says something
they show has changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from akgentic.console.pictures.graph import graph_data, graph_svg
from akgentic.console.pictures.scan import LogScan, scan_log
from akgentic.console.pictures.timeline import timeline_data, timeline_svg
from akgentic.console.pictures.usage import (
    BudgetSource,
    ChartBudget,
    card_budget,
    chart_budget,
    usage_data,
    usage_svg,
)

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = [
    "PICTURES",
    "BudgetSource",
    "ChartBudget",
    "LogScan",
    "PictureName",
    "card_budget",
    "chart_budget",
    "graph_data",
    "graph_svg",
    "picture_svg",
    "scan_log",
    "team_pictures",
    "timeline_data",
    "timeline_svg",
    "usage_data",
    "usage_svg",
]

PictureName = Literal["graph", "usage", "timeline"]
#: The pictures, in the order the page shows them.
PICTURES: tuple[PictureName, ...] = ("graph", "usage", "timeline")


def team_pictures(
    messages: Iterable[Message], budget: ChartBudget | None = None
) -> dict[str, dict[str, Any]]:
    """The three pictures of a log: ``{"graph": {...}, "usage": {...}, "timeline": {...}}``.

    Each holds its ``svg``; the graph also says how many ``members`` and ``edges``
    it drew, and the usage chart the ``budget`` it drew (None without one).
    """
    scan = scan_log(messages)
    graph = graph_data(scan)
    usage = usage_data(scan, budget)
    return {
        "graph": {
            "svg": graph_svg(graph),
            "members": len(graph["members"]),
            "edges": len(graph["edges"]),
        },
        "usage": {"svg": usage_svg(usage), "budget": usage["budget"]},
        "timeline": {"svg": timeline_svg(timeline_data(scan))},
    }


def picture_svg(
    name: PictureName, messages: Iterable[Message], budget: ChartBudget | None = None
) -> str:
    """One picture of a log as an SVG document."""
    scan = scan_log(messages)
    if name == "graph":
        return graph_svg(graph_data(scan))
    if name == "usage":
        return usage_svg(usage_data(scan, budget))
    return timeline_svg(timeline_data(scan))
