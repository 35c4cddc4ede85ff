"""The team graph: members as nodes, messages between them as edges weighted by count.

:func:`graph_data` turns a :class:`~akgentic.console.pictures.scan.LogScan` into
plain JSON data; :func:`graph_layout` places the members as a radial tree, the
team's first members in the middle and each hire one ring further out than its
hirer, in its hirer's wedge of the circle (``O(n log n)``, no iteration, so the
1,000-member graph of ``bench/observe.py`` draws in milliseconds); :func:`graph_svg`
draws it. A hire is a member whose ``StartMessage`` names another member as its
parent; it is linked to its hirer by a dashed line.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from akgentic.console.pictures.scan import LogScan
from akgentic.console.pictures.svg import SvgWriter, clip, escape, fmt

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

    A radial tree: the members no member hired are the roots (one root sits in the
    middle; several share the inner ring), and each hire sits one ring further out
    than its hirer, inside the hirer's wedge of the circle. A wedge is shared among
    the hires in proportion to their leaves (the members at the tips of their own
    hires), so a hirer's hires sit together next to it; a ring's radius is the least
    at which no two of its members are closer than :data:`SPACING`. Two passes over
    the members in start order (a hirer starts before its hires) and a sort per
    ring, no iteration.
    """
    if not members:
        return {}, 0.0
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for member in members:
        parent = member["parent"]
        if parent is not None and parent in children:
            children[parent].append(member["id"])
        else:
            roots.append(member["id"])
        children[member["id"]] = []
    leaves: dict[str, int] = {}
    for member in reversed(members):
        below = children[member["id"]]
        leaves[member["id"]] = sum(leaves[c] for c in below) if below else 1
    middle = roots[0] if len(roots) == 1 else None
    wedge: dict[str, tuple[float, float]] = {}  # id -> (start angle, width)
    _share(roots, _around(roots, leaves), 2 * math.pi, leaves, wedge)
    depth: dict[str, int] = {}
    angles: dict[int, list[float]] = {}
    top = set(roots)
    for member in members:
        key = member["id"]
        depth[key] = 0 if key in top else depth[member["parent"]] + 1
        below = children[key]
        if key == middle:
            _share(below, _around(below, leaves), 2 * math.pi, leaves, wedge)
            continue
        start, width = wedge[key]
        _share(below, start, width, leaves, wedge)
        angles.setdefault(depth[key], []).append(start + width / 2)
    radii: dict[int, float] = {}
    radius = 0.0
    for level in sorted(angles):
        least = RING_GAP * (0.7 if level == 0 else 1.0)
        radius = radii[level] = max(radius + least, _spaced(angles[level]))
    where: dict[str, tuple[float, float]] = {}
    for key, (start, width) in wedge.items():
        if key == middle:
            where[key] = (0.0, 0.0)
        else:
            theta, ring = start + width / 2, radii[depth[key]]
            where[key] = (ring * math.cos(theta), ring * math.sin(theta))
    return where, radius


def _spaced(angles: list[float]) -> float:
    """The radius at which the closest two of ``angles`` are :data:`SPACING` apart."""
    if len(angles) < 2:
        return 0.0
    ordered = sorted(angles)
    gap = min(b - a for a, b in itertools.pairwise(ordered))
    gap = min(gap, ordered[0] + 2 * math.pi - ordered[-1])
    if gap >= math.pi:
        return SPACING / 2
    return SPACING / (2 * math.sin(max(gap, 1e-9) / 2))


def _around(keys: list[str], leaves: dict[str, int]) -> float:
    """Where a whole circle shared by ``keys`` starts so that the first one is at the top."""
    if not keys:
        return 0.0
    return -math.pi / 2 - math.pi * leaves[keys[0]] / sum(leaves[k] for k in keys)


def _share(
    keys: list[str],
    start: float,
    width: float,
    leaves: dict[str, int],
    wedge: dict[str, tuple[float, float]],
) -> None:
    """Split the wedge ``(start, width)`` among ``keys``, in order, by their leaves."""
    total = sum(leaves[k] for k in keys)
    for key in keys:
        share = width * leaves[key] / total
        wedge[key] = (start, share)
        start += share


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
    # The three loops below write their elements directly (a 1,000-member graph is
    # ~5,000 elements): every data value goes through ``escape``, coordinates through
    # ``fmt``, everything else is this module's own constants.
    at = {key: (fmt(x), fmt(y)) for key, (x, y) in where.items()}
    out = svg.parts
    out.append('<g class="hires">')
    for member in members:
        parent = member["parent"]
        if parent is not None:
            (x1, y1), (x2, y2) = at[parent], at[member["id"]]
            out.append(
                f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="hire" stroke="#1e7a35"'
                ' stroke-dasharray="4 4" stroke-width="1"/>'
            )
    out.append('</g><g class="edges">')
    labelled = len(edges) <= LABELLED_EDGES
    for edge in edges:
        (x1, y1), (x2, y2) = at[edge["source"]], at[edge["target"]]
        source, target, count = edge["source_name"], edge["target_name"], edge["count"]
        width = fmt(min(9.0, 1.0 + 1.6 * math.log2(count)))
        title = f"{source} → {target}: {edge['forward']} · {target} → {source}: {edge['backward']}"
        label = ""
        if labelled:
            (a, b), (c, d) = where[edge["source"]], where[edge["target"]]
            label = (
                f'<text x="{fmt((a + c) / 2)}" y="{fmt((b + d) / 2 - 4)}" class="edge-count"'
                f' text-anchor="middle" font-size="10" fill="#6b7385">{count}</text>'
            )
        out.append(
            f'<g class="edge" data-source="{escape(source)}" data-target="{escape(target)}"'
            f' data-count="{count}"><line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"'
            f' stroke="#9aa3b5" stroke-width="{width}" stroke-linecap="round"/>'
            f"<title>{escape(title)}</title>{label}</g>"
        )
    out.append('</g><g class="nodes">')
    labelled = len(members) <= LABELLED_NODES
    for member in members:
        x, y = at[member["id"]]
        kind = _kind(member)
        label = ""
        if labelled:
            label = (
                f'<text x="{x}" y="{fmt(where[member["id"]][1] - 14)}" text-anchor="middle"'
                f' font-size="11" fill="#1d2330">{escape(clip(member["name"], 24))}</text>'
            )
        out.append(
            f'<g class="node {kind}" data-member="{escape(member["name"])}"'
            f' data-id="{escape(member["id"])}"><circle cx="{x}" cy="{y}" r="9"'
            f' fill="{_COLOURS[kind]}"/>{label}<title>{escape(_node_title(member))}</title></g>'
        )
    out.append("</g>")
    return svg.render()
