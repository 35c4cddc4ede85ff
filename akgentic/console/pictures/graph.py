"""The team graph: members as nodes, messages between them as edges weighted by count.

:func:`graph_data` turns a :class:`~akgentic.console.pictures.scan.LogScan` into
plain JSON data; :func:`graph_layout` places the members on rings, the team's first
members in the middle and each hire one ring further out than its hirer, siblings
side by side in the order they were hired (``O(n log n)``, no iteration, so the
1,000-member graph of ``bench/observe.py`` draws in milliseconds); :func:`graph_svg`
draws it. A hire is a member whose ``StartMessage`` names another member as its
parent; it is linked to its hirer by a dashed line.
"""

from __future__ import annotations

import math
from typing import Any

from akgentic.console.pictures.scan import LogScan
from akgentic.console.pictures.svg import SvgWriter, clip, fmt

__all__ = ["graph_data", "graph_layout", "graph_svg"]

#: Arc length between two neighbours on a ring, and the least gap between rings.
SPACING = 36.0
RING_GAP = 90.0
#: Above these counts, names and edge counts are left to the tooltips (they would overlap).
LABELLED_NODES = 120
LABELLED_EDGES = 150
_MARGIN = 70.0
_COLOURS = {"human": "#d97706", "hired": "#1e7a35", "member": "#2f5fd0", "stopped": "#9aa3b5"}


def graph_data(scan: LogScan) -> dict[str, Any]:
    """``{"members": [...], "edges": [...]}``, members in start order.

    A member: ``id``, ``name``, ``role``, ``human``, ``parent`` (its hirer's id or
    None), ``hired_by`` (the hirer's name), ``stopped``, ``sent``, ``received``. An
    edge joins two members who exchanged messages: ``source`` / ``target`` ids
    (the earlier member first), their names, ``forward`` (messages source to
    target), ``backward`` and ``count`` (both).
    """
    members = scan.members
    order = {agent: index for index, agent in enumerate(members)}
    sent: dict[str, int] = {}
    received: dict[str, int] = {}
    pairs: dict[tuple[str, str], list[int]] = {}
    for (source, target), count in scan.sent.items():
        if source not in order or target not in order:
            continue
        sent[source] = sent.get(source, 0) + count
        received[target] = received.get(target, 0) + count
        forward = order[source] <= order[target]
        key = (source, target) if forward else (target, source)
        counts = pairs.setdefault(key, [0, 0])
        counts[0 if forward else 1] += count
    return {
        "members": [
            {
                "id": m.id,
                "name": m.name,
                "role": m.role,
                "human": m.human,
                "parent": m.parent,
                "hired_by": members[m.parent].name if m.parent is not None else None,
                "stopped": m.stopped,
                "sent": sent.get(m.id, 0),
                "received": received.get(m.id, 0),
            }
            for m in members.values()
        ],
        "edges": [
            {
                "source": a,
                "target": b,
                "source_name": members[a].name,
                "target_name": members[b].name,
                "forward": f,
                "backward": r,
                "count": f + r,
            }
            for (a, b), (f, r) in pairs.items()
        ],
    }


def graph_layout(members: list[dict[str, Any]]) -> tuple[dict[str, tuple[float, float]], float]:
    """Each member's ``(x, y)`` around the origin, and the outer ring's radius.

    Rings by hire depth; on each ring the hires are ordered by their hirer's place
    on the ring inside, so a hirer's hires sit together.
    """
    depth: dict[str, int] = {}
    rings: dict[int, list[dict[str, Any]]] = {}
    for member in members:  # a hirer starts before its hires, so its depth is known
        parent = member["parent"]
        level = depth[parent] + 1 if parent in depth else 0
        depth[member["id"]] = level
        rings.setdefault(level, []).append(member)
    where: dict[str, tuple[float, float]] = {}
    place: dict[str, int] = {}
    radius = 0.0
    for level in sorted(rings):
        ring = rings[level]
        if level > 0:
            ring.sort(key=lambda m: place[m["parent"]])  # stable: hire order among siblings
        count = len(ring)
        if level == 0 and count == 1:
            where[ring[0]["id"]] = (0.0, 0.0)
            place[ring[0]["id"]] = 0
            continue
        least = RING_GAP * (0.7 if level == 0 else 1.0)
        radius = max(radius + least, count * SPACING / (2 * math.pi))
        for index, member in enumerate(ring):
            angle = -math.pi / 2 + 2 * math.pi * index / count
            where[member["id"]] = (radius * math.cos(angle), radius * math.sin(angle))
            place[member["id"]] = index
    return where, radius


def _kind(member: dict[str, Any]) -> str:
    if member["stopped"]:
        return "stopped"
    if member["human"]:
        return "human"
    return "hired" if member["parent"] is not None else "member"


def _node_title(member: dict[str, Any]) -> str:
    parts = [member["name"], member["role"]]
    if member["hired_by"] is not None:
        parts.append(f"hired by {member['hired_by']}")
    parts.append(f"sent {member['sent']}, received {member['received']}")
    if member["stopped"]:
        parts.append("stopped")
    return " · ".join(parts)


def graph_svg(data: dict[str, Any]) -> str:
    """The graph of :func:`graph_data` as an SVG document (every label escaped)."""
    members: list[dict[str, Any]] = data["members"]
    edges: list[dict[str, Any]] = data["edges"]
    where, radius = graph_layout(members)
    extent = radius + _MARGIN
    size = 2 * extent
    svg = SvgWriter(
        size,
        size,
        f"{fmt(-extent)} {fmt(-extent)} {fmt(size)} {fmt(size)}",
        {
            "class": "picture team-graph",
            "role": "img",
            "aria-label": f"team graph: {len(members)} members, {len(edges)} links",
            "data-members": len(members),
            "data-edges": len(edges),
        },
    )
    if not members:
        svg.add("text", {"x": 0, "y": 0, "text-anchor": "middle", "class": "empty"}, "no member")
        return svg.render()
    svg.open("g", {"class": "hires"})
    for member in members:
        parent = member["parent"]
        if parent is not None:
            (x1, y1), (x2, y2) = where[parent], where[member["id"]]
            svg.add(
                "line",
                {
                    "x1": x1,
                    "y1": y1,
                    "x2": x2,
                    "y2": y2,
                    "class": "hire",
                    "stroke": "#1e7a35",
                    "stroke-dasharray": "4 4",
                    "stroke-width": 1,
                },
            )
    svg.close("g")
    svg.open("g", {"class": "edges"})
    labelled = len(edges) <= LABELLED_EDGES
    for edge in edges:
        (x1, y1), (x2, y2) = where[edge["source"]], where[edge["target"]]
        count = edge["count"]
        svg.open(
            "g",
            {
                "class": "edge",
                "data-source": edge["source_name"],
                "data-target": edge["target_name"],
                "data-count": count,
            },
        )
        width = min(9.0, 1.0 + 1.6 * math.log2(count))
        svg.add(
            "line",
            {
                "x1": x1,
                "y1": y1,
                "x2": x2,
                "y2": y2,
                "stroke": "#9aa3b5",
                "stroke-width": width,
                "stroke-linecap": "round",
            },
        )
        svg.title(
            f"{edge['source_name']} → {edge['target_name']}: {edge['forward']} · "
            f"{edge['target_name']} → {edge['source_name']}: {edge['backward']}"
        )
        if labelled:
            svg.add(
                "text",
                {
                    "x": (x1 + x2) / 2,
                    "y": (y1 + y2) / 2 - 4,
                    "class": "edge-count",
                    "text-anchor": "middle",
                    "font-size": 10,
                    "fill": "#6b7385",
                },
                str(count),
            )
        svg.close("g")
    svg.close("g")
    svg.open("g", {"class": "nodes"})
    labelled = len(members) <= LABELLED_NODES
    for member in members:
        x, y = where[member["id"]]
        kind = _kind(member)
        svg.open(
            "g", {"class": f"node {kind}", "data-member": member["name"], "data-id": member["id"]}
        )
        svg.add("circle", {"cx": x, "cy": y, "r": 9, "fill": _COLOURS[kind]})
        if labelled:
            svg.add(
                "text",
                {"x": x, "y": y - 14, "text-anchor": "middle", "font-size": 11, "fill": "#1d2330"},
                clip(member["name"], 24),
            )
        svg.title(_node_title(member))
        svg.close("g")
    svg.close("g")
    return svg.render()
