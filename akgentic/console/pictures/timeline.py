"""The timeline: a Gantt-like strip per member of its turns, tool calls and model responses.

A turn is a member handling one message (``ReceivedMessage`` to
``ProcessedMessage``), a tool call runs from its ``ToolCallEvent`` to its
``ToolReturnEvent`` (red when it failed), and a tick marks each model response
(``LlmUsageEvent``). What has not ended yet runs to the end of the log and is
drawn as open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from akgentic.console.pictures.scan import Bar, LogScan
from akgentic.console.pictures.svg import SvgWriter, clip, fmt

__all__ = ["timeline_data", "timeline_svg"]

#: Members drawn (in start order); the others are counted below the strips.
MAX_ROWS = 100
#: Bars of each kind drawn, the newest kept: a long log still draws quickly.
MAX_BARS = 4_000
_WIDTH, _LABELS, _RIGHT, _TOP, _ROW = 640.0, 120.0, 16.0, 8.0, 24.0
_TOOL_COLOURS = {"ok": "#1e7a35", "failed": "#b3261e", "open": "#d97706"}


def _bar(bar: Bar) -> list[Any]:
    return [round(bar.start, 3), None if bar.end is None else round(bar.end, 3), bar.label]


def timeline_data(scan: LogScan) -> dict[str, Any]:
    """The timeline's JSON: ``duration`` and, per member in start order, its bars.

    ``turns``: ``[start, end or None, who sent the message handled]``; ``tools``:
    ``[start, end or None, tool name, succeeded]``; ``responses``: the seconds at
    which each model response arrived.
    """
    rows: dict[str, dict[str, Any]] = {
        m.id: {
            "id": m.id,
            "name": m.name,
            "human": m.human,
            "turns": [],
            "tools": [],
            "responses": [],
        }
        for m in scan.members.values()
    }
    for bar in scan.turns[-MAX_BARS:]:
        rows[bar.member]["turns"].append(_bar(bar))
    for bar in scan.tools[-MAX_BARS:]:
        rows[bar.member]["tools"].append([*_bar(bar), bar.ok])
    for point in scan.usage[-MAX_BARS:]:
        rows[point.member]["responses"].append(round(point.time, 3))
    return {"duration": round(scan.duration, 3), "members": list(rows.values())}


def _seconds(start: float, end: float | None) -> str:
    return "still running" if end is None else f"{end - start:.2f} s"


def _tool_state(end: float | None, ok: bool) -> str:
    return "open" if end is None else "ok" if ok else "failed"


@dataclass
class _Piece:
    """A bar in drawing coordinates; bars closer than a pixel are drawn as one."""

    left: float
    right: float
    state: str
    start: float
    end: float | None
    tool: str
    cause: str = ""
    count: int = 1

    def title(self, name: str) -> str:
        if self.count > 1:
            end = "now" if self.end is None else f"{self.end:.2f} s"
            what = f"calls of tool {self.tool}" if self.tool else "turns"
            return f"{name}: {self.count} {what}, {self.start:.2f} s to {end}"
        if self.tool:
            failed = ", failed" if self.state == "failed" else ""
            return f"{name}: tool {self.tool}, {_seconds(self.start, self.end)}{failed}"
        on = f" on a message from {self.cause}" if self.cause else ""
        return f"{name}: turn{on}, {_seconds(self.start, self.end)}"


def _merged(pieces: list[_Piece]) -> list[_Piece]:
    """Runs of bars of one state (and tool) less than a pixel apart, as one bar each.

    A long log has thousands of turns in a strip a few hundred pixels wide: this
    keeps the document about as large as the strip, whatever the log's length.
    """
    out: list[_Piece] = []
    for piece in pieces:
        last = out[-1] if out else None
        if (
            last is not None
            and (last.state, last.tool) == (piece.state, piece.tool)
            and piece.left - last.right < 1.0
        ):
            last.right = max(last.right, piece.right)
            last.end = piece.end
            last.count += 1
        else:
            out.append(piece)
    return out


def timeline_svg(data: dict[str, Any]) -> str:
    """The timeline of :func:`timeline_data` as an SVG document (every label escaped)."""
    members: list[dict[str, Any]] = data["members"]
    shown = members[:MAX_ROWS]
    duration = float(data["duration"]) or 1.0
    plot = _WIDTH - _LABELS - _RIGHT
    axis_y = _TOP + max(len(shown), 1) * _ROW + 14
    height = axis_y + (22 if len(members) > len(shown) else 8)

    def x(seconds: float | None) -> float:
        value = duration if seconds is None else seconds
        return _LABELS + plot * min(max(value / duration, 0.0), 1.0)

    svg = SvgWriter(
        _WIDTH,
        height,
        f"0 0 {fmt(_WIDTH)} {fmt(height)}",
        {
            "class": "picture timeline",
            "role": "img",
            "data-members": len(members),
            "aria-label": f"timeline of turns and tool calls, {len(members)} members",
        },
    )
    if not members:
        svg.add(
            "text",
            {
                "x": _WIDTH / 2,
                "y": _TOP + 14,
                "text-anchor": "middle",
                "font-size": 12,
                "fill": "#6b7385",
                "class": "empty",
            },
            "no member",
        )
    for index, member in enumerate(shown):
        top = _TOP + index * _ROW
        name = member["name"]
        svg.open("g", {"class": "row", "data-member": name})
        svg.add(
            "rect",
            {
                "x": _LABELS,
                "y": top,
                "width": plot,
                "height": _ROW - 2,
                "fill": "#fbfcfe" if index % 2 else "#f1f3f8",
            },
        )
        svg.add(
            "text",
            {
                "x": _LABELS - 6,
                "y": top + 15,
                "text-anchor": "end",
                "font-size": 11,
                "fill": "#1d2330",
                "class": "label",
            },
            clip(name, 18),
        )
        turns = [
            _Piece(x(start), x(end), "open" if end is None else "done", start, end, "", cause)
            for start, end, cause in member["turns"]
        ]
        for piece in _merged(turns):
            svg.open(
                "rect",
                {
                    "x": piece.left,
                    "y": top + 3,
                    "width": max(2.0, piece.right - piece.left),
                    "height": 14,
                    "fill": "#c7d4f5",
                    "stroke": "#2f5fd0",
                    "class": "turn open" if piece.state == "open" else "turn",
                    "data-count": piece.count if piece.count > 1 else None,
                },
            )
            svg.title(piece.title(name))
            svg.close("rect")
        tools = [
            _Piece(x(start), x(end), _tool_state(end, ok), start, end, tool)
            for start, end, tool, ok in member["tools"]
        ]
        for piece in _merged(tools):
            svg.open(
                "rect",
                {
                    "x": piece.left,
                    "y": top + 12,
                    "width": max(2.0, piece.right - piece.left),
                    "height": 8,
                    "fill": _TOOL_COLOURS[piece.state],
                    "class": f"tool {piece.state}",
                    "data-tool": piece.tool,
                    "data-count": piece.count if piece.count > 1 else None,
                },
            )
            svg.title(piece.title(name))
            svg.close("rect")
        for tick in sorted({round(x(when)) for when in member["responses"]}):  # one a pixel
            svg.add(
                "line",
                {
                    "x1": tick,
                    "x2": tick,
                    "y1": top + 1,
                    "y2": top + _ROW - 3,
                    "stroke": "#9333ea",
                    "stroke-width": 1.5,
                    "class": "response",
                },
            )
        svg.close("g")
    for step in range(5):
        seconds = duration * step / 4
        anchor = "start" if step == 0 else "end" if step == 4 else "middle"
        svg.add(
            "text",
            {
                "x": x(seconds),
                "y": axis_y,
                "font-size": 10,
                "fill": "#6b7385",
                "text-anchor": anchor,
            },
            f"{seconds:.1f} s",
        )
    hidden = len(members) - len(shown)
    if hidden > 0:
        svg.add(
            "text",
            {"x": _LABELS, "y": axis_y + 16, "font-size": 10, "fill": "#6b7385", "class": "more"},
            f"+{hidden} more members not drawn",
        )
    return svg.render()
