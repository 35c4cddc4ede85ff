"""The chart of tokens and estimated cost over time, per member and for the team.

:func:`usage_data` sums the team's ``LlmUsageEvent`` s into cumulative series
(the cost is the event's ``estimated_cost_usd``, priced with
:func:`akgentic.llm.pricing.estimate_cost` when the response was recorded);
:func:`usage_svg` draws two panels, tokens above and USD below, sharing the time
axis.

The budget seam: the JSON the chart is fed carries ``"budget"``, either None or
``{"usd": 1.0, "total_tokens": 50000}`` (either key may be missing). When a limit
is there, the panel of its unit draws it as a dashed horizontal line and scales so
the line is in view. Where the limit comes from is a :data:`BudgetSource`, a
function of the team's record and its log; the console's default
(:func:`card_budget`) reads a ``budget`` on the team card, which no card has until
the team-wide budget lands; that feature plugs its own source in (see
``ConsoleService.budget_of``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from akgentic.console.pictures.scan import LogScan
from akgentic.console.pictures.svg import SvgWriter, clip, fmt

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message
    from akgentic.team.models import Process

__all__ = [
    "BudgetSource",
    "ChartBudget",
    "card_budget",
    "chart_budget",
    "usage_data",
    "usage_svg",
]

#: Members drawn with a line of their own (the most tokens first); the team's total has all.
MAX_SERIES = 10
PALETTE = (
    "#2f5fd0",
    "#d97706",
    "#1e7a35",
    "#9333ea",
    "#0891b2",
    "#be185d",
    "#65a30d",
    "#b45309",
    "#4f46e5",
    "#0f766e",
)
_TEAM_COLOUR = "#1d2330"
_BUDGET_COLOUR = "#b3261e"
_WIDTH, _LEFT, _RIGHT, _TOP = 640.0, 70.0, 16.0, 24.0
_TOKENS_H, _USD_H, _GAP = 150.0, 110.0, 40.0
_LEGEND_ROW, _LEGEND_COLUMNS = 18.0, 3


class ChartBudget(TypedDict, total=False):
    """A team's limits as the chart draws them: estimated USD and total tokens."""

    usd: float
    total_tokens: int


#: Where the chart's budget comes from: the team's record and its log -> limits or None.
BudgetSource = Callable[["Process", Sequence["Message"]], "ChartBudget | None"]


def _limit(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def chart_budget(value: object) -> ChartBudget | None:
    """The limits the chart can draw out of ``value`` (a mapping or an object), or None.

    Only ``usd`` and ``total_tokens`` are read, and only finite positive numbers
    are kept: anything else (a string, NaN, a negative) is ignored, not drawn.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        dump = getattr(value, "model_dump", None)
        value = dump() if callable(dump) else vars(value) if hasattr(value, "__dict__") else {}
    if not isinstance(value, Mapping):
        return None
    found = ChartBudget()
    usd = _limit(value.get("usd"))
    if usd is not None:
        found["usd"] = usd
    tokens = _limit(value.get("total_tokens"))
    if tokens is not None:
        found["total_tokens"] = int(tokens)
    return found or None


def card_budget(process: Process, messages: Sequence[Message]) -> ChartBudget | None:
    """The default :data:`BudgetSource`: a ``budget`` the team card carries, if any."""
    return chart_budget(getattr(process.team_card, "budget", None))


def _points(values: list[tuple[float, int, float]]) -> list[list[float]]:
    tokens, usd, points = 0, 0.0, []
    for time, spent, cost in values:
        tokens += spent
        usd += cost
        points.append([round(time, 3), tokens, round(usd, 8)])
    return points


def usage_data(scan: LogScan, budget: ChartBudget | None = None) -> dict[str, Any]:
    """The chart's JSON: ``duration``, ``members``, ``team`` and ``budget``.

    ``members`` lists each member that used a model, in start order, with its
    cumulative ``points`` (``[seconds, total tokens, USD]``, one per response),
    ``total_tokens`` and ``usd``; ``team`` sums them all. ``budget`` is
    :func:`chart_budget` of the given limits.
    """
    by_member: dict[str, list[tuple[float, int, float]]] = {}
    for point in scan.usage:
        by_member.setdefault(point.member, []).append((point.time, point.total_tokens, point.usd))
    members = []
    for agent in scan.members:
        if agent in by_member:
            points = _points(by_member[agent])
            members.append(
                {
                    "id": agent,
                    "name": scan.name(agent),
                    "points": points,
                    "total_tokens": points[-1][1],
                    "usd": points[-1][2],
                }
            )
    team = _points([(p.time, p.total_tokens, p.usd) for p in scan.usage])
    return {
        "duration": round(scan.duration, 3),
        "members": members,
        "team": {
            "points": team,
            "total_tokens": team[-1][1] if team else 0,
            "usd": team[-1][2] if team else 0.0,
        },
        "budget": chart_budget(budget),
    }


def _tokens(value: float) -> str:
    return f"{round(value):,}"


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


class _Panel:
    """One panel: a y scale for one unit over the shared time axis."""

    def __init__(self, top: float, height: float, top_value: float, duration: float) -> None:
        self.top, self.height = top, height
        self.top_value = top_value if top_value > 0 else 1.0
        self.duration = duration if duration > 0 else 1.0
        self.width = _WIDTH - _LEFT - _RIGHT

    def x(self, seconds: float) -> float:
        return _LEFT + self.width * min(max(seconds / self.duration, 0.0), 1.0)

    def y(self, value: float) -> float:
        return self.top + self.height * (1 - min(value / self.top_value, 1.0))

    def step_line(self, points: list[list[float]], column: int) -> str:
        """A staircase: a cumulative total only changes when a response arrives.

        Responses less than a pixel apart make one step (the total at its top), so a
        line has at most two corners per pixel however long the log.
        """
        coords: list[str] = []
        last = 0.0
        step_x: float | None = None
        for point in points:
            x, value = self.x(point[0]), point[column]
            if step_x is not None and x - step_x < 1.0:
                coords[-1] = f"{fmt(step_x)},{fmt(self.y(value))}"
            else:
                step_x = x
                coords.append(f"{fmt(x)},{fmt(self.y(last))}")
                coords.append(f"{fmt(x)},{fmt(self.y(value))}")
            last = value
        coords.append(f"{fmt(self.x(self.duration))},{fmt(self.y(last))}")
        return " ".join(coords)


def _frame(svg: SvgWriter, panel: _Panel, unit: str, top_label: str) -> None:
    bottom = panel.top + panel.height
    svg.add(
        "rect",
        {
            "x": _LEFT,
            "y": panel.top,
            "width": panel.width,
            "height": panel.height,
            "fill": "#fbfcfe",
            "stroke": "#d9dde5",
            "class": "frame",
        },
    )
    svg.add(
        "text",
        {
            "x": _LEFT - 6,
            "y": panel.top + 4,
            "text-anchor": "end",
            "font-size": 10,
            "fill": "#6b7385",
        },
        top_label,
    )
    svg.add(
        "text",
        {"x": _LEFT - 6, "y": bottom, "text-anchor": "end", "font-size": 10, "fill": "#6b7385"},
        "0",
    )
    svg.add(
        "text",
        {
            "x": 4,
            "y": panel.top + panel.height / 2,
            "font-size": 11,
            "fill": "#1d2330",
            "class": "unit",
        },
        unit,
    )


def _budget_line(svg: SvgWriter, panel: _Panel, unit: str, value: float, label: str) -> None:
    y = panel.y(value)
    svg.open("g", {"class": "budget", "data-unit": unit, "data-value": repr(value)})
    svg.add(
        "line",
        {
            "x1": _LEFT,
            "x2": _LEFT + panel.width,
            "y1": y,
            "y2": y,
            "stroke": _BUDGET_COLOUR,
            "stroke-width": 1.5,
            "stroke-dasharray": "6 4",
        },
    )
    svg.add(
        "text",
        {
            "x": _LEFT + panel.width - 4,
            "y": y - 4,
            "text-anchor": "end",
            "font-size": 10,
            "fill": _BUDGET_COLOUR,
        },
        label,
    )
    svg.close("g")


def _series(
    svg: SvgWriter,
    panels: tuple[_Panel, _Panel],
    points: list[list[float]],
    attrs: dict[str, str | float],
    title: str,
) -> None:
    """One line in each panel (tokens, then USD), grouped, with its tooltip."""
    svg.open("g", attrs)
    for panel, column in zip(panels, (1, 2), strict=True):
        svg.add(
            "polyline",
            {
                "points": panel.step_line(points, column),
                "fill": "none",
                "class": "tokens" if column == 1 else "usd",
            },
        )
    svg.title(title)
    svg.close("g")


def usage_svg(data: dict[str, Any]) -> str:
    """The chart of :func:`usage_data` as an SVG document (every label escaped)."""
    members: list[dict[str, Any]] = data["members"]
    team: dict[str, Any] = data["team"]
    # The JSON may come from anywhere (the seam): only finite positive limits are drawn.
    budget: ChartBudget = chart_budget(data.get("budget")) or ChartBudget()
    duration = float(data["duration"])
    drawn = sorted(members, key=lambda m: -m["total_tokens"])[:MAX_SERIES]
    legend_rows = math.ceil((len(drawn) + 1) / _LEGEND_COLUMNS)
    usd_top = _TOP + _TOKENS_H + _GAP
    axis_y = usd_top + _USD_H + 14
    height = axis_y + 16 + legend_rows * _LEGEND_ROW + 8
    top_tokens = max(float(team["total_tokens"]), float(budget.get("total_tokens", 0))) * 1.08
    top_usd = max(float(team["usd"]), float(budget.get("usd", 0.0))) * 1.08
    tokens = _Panel(_TOP, _TOKENS_H, top_tokens, duration)
    usd = _Panel(usd_top, _USD_H, top_usd, duration)
    svg = SvgWriter(
        _WIDTH,
        height,
        f"0 0 {fmt(_WIDTH)} {fmt(height)}",
        {
            "class": "picture usage-chart",
            "role": "img",
            "data-members": len(members),
            "aria-label": f"tokens and cost over time, {len(members)} members",
        },
    )
    svg.add(
        "text",
        {"x": _LEFT, "y": 14, "font-size": 11, "fill": "#1d2330", "class": "spent"},
        f"team: {_tokens(team['total_tokens'])} tokens · {_usd(team['usd'])}",
    )
    # An empty panel keeps a scale of 1 to draw on, but says 0 rather than a made-up top.
    _frame(svg, tokens, "tokens", _tokens(top_tokens) if top_tokens > 0 else "0")
    _frame(svg, usd, "USD", _usd(top_usd) if top_usd > 0 else "$0")
    for index, member in enumerate(drawn):
        colour = PALETTE[index % len(PALETTE)]
        title = (
            f"{member['name']}: {_tokens(member['total_tokens'])} tokens · {_usd(member['usd'])}"
        )
        attrs: dict[str, str | float] = {
            "class": "series",
            "stroke": colour,
            "stroke-width": 1.5,
            "data-member": member["name"],
        }
        _series(svg, (tokens, usd), member["points"], attrs, title)
    if team["points"]:
        title = f"team: {_tokens(team['total_tokens'])} tokens · {_usd(team['usd'])}"
        attrs = {"class": "series team", "stroke": _TEAM_COLOUR, "stroke-width": 2.5}
        _series(svg, (tokens, usd), team["points"], attrs, title)
    else:
        svg.add(
            "text",
            {
                "x": _LEFT + tokens.width / 2,
                "y": _TOP + _TOKENS_H / 2,
                "text-anchor": "middle",
                "font-size": 12,
                "fill": "#6b7385",
                "class": "empty",
            },
            "no model usage yet",
        )
    if "total_tokens" in budget:
        value = budget["total_tokens"]
        _budget_line(svg, tokens, "total_tokens", value, f"budget {_tokens(value)} tokens")
    if "usd" in budget:
        _budget_line(svg, usd, "usd", budget["usd"], f"budget {_usd(budget['usd'])}")
    svg.add("text", {"x": _LEFT, "y": axis_y, "font-size": 10, "fill": "#6b7385"}, "0 s")
    svg.add(
        "text",
        {
            "x": _WIDTH - _RIGHT,
            "y": axis_y,
            "font-size": 10,
            "fill": "#6b7385",
            "text-anchor": "end",
        },
        f"{duration:.1f} s",
    )
    entries = [("team", _TEAM_COLOUR, "legend team")] + [
        (m["name"], PALETTE[i % len(PALETTE)], "legend") for i, m in enumerate(drawn)
    ]
    column_width = (_WIDTH - _LEFT) / _LEGEND_COLUMNS
    for index, (name, colour, cls) in enumerate(entries):
        x = _LEFT + (index % _LEGEND_COLUMNS) * column_width
        y = axis_y + 16 + (index // _LEGEND_COLUMNS) * _LEGEND_ROW
        svg.open("g", {"class": cls})
        svg.add("rect", {"x": x, "y": y - 9, "width": 10, "height": 10, "fill": colour})
        svg.add("text", {"x": x + 14, "y": y, "font-size": 11, "fill": "#1d2330"}, clip(name, 22))
        svg.close("g")
    hidden = len(members) - len(drawn)
    if hidden > 0:
        svg.add(
            "text",
            {
                "x": _WIDTH - _RIGHT,
                "y": height - 4,
                "font-size": 10,
                "text-anchor": "end",
                "fill": "#6b7385",
                "class": "more",
            },
            f"+{hidden} more members (in the team's line)",
        )
    return svg.render()
