"""The naming rules of a team card's member tree, on a validated card or on raw data.

The rules (the entry point has headcount 1, every ``config.name`` is non-empty and
unique, no two spawned names collide) are checked by :class:`~akgentic.team.card.TeamCard`
once its fields are valid. A card file with other problems never gets that far, so
the loader also runs :func:`tree_problems` on the raw mapping through
:func:`raw_tree_nodes`: one run reports the naming problems together with the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Location", "TreeNode", "raw_tree_nodes", "tree_problems"]

Location = tuple[int | str, ...]


@dataclass(frozen=True)
class TreeNode:
    """One member of the tree: where it is, its declared name and its headcount."""

    location: Location
    name: str
    headcount: int


def _spawned(name: str, headcount: int) -> list[str]:
    return [name] if headcount == 1 else [f"{name}_{i}" for i in range(headcount)]


def _count(node: TreeNode) -> int:
    return max(node.headcount, 1)


def tree_problems(nodes: Sequence[TreeNode]) -> list[tuple[Location, str]]:
    """Every naming problem of ``nodes`` (the entry point first), each with its location."""
    problems: list[tuple[Location, str]] = []
    if nodes and nodes[0].location == ("entry_point",) and nodes[0].headcount != 1:
        entry = nodes[0]
        problems.append(
            (
                (*entry.location, "headcount"),
                f"entry_point {entry.name!r} must have headcount 1, not {entry.headcount}: "
                "it is the single sender of the team",
            )
        )
    declared: dict[str, TreeNode] = {}
    for node in nodes:
        if not node.name:
            problems.append(
                (
                    (*node.location, "card", "config", "name"),
                    "every member of a team card needs a non-empty config.name "
                    "(it is how the team routes to it)",
                )
            )
        elif node.name in declared:
            problems.append(
                (
                    (*node.location, "card", "config", "name"),
                    f"duplicate agent name {node.name!r}: every config.name in the member tree "
                    "must be unique (reusing one card in two places is the usual cause)",
                )
            )
        else:
            declared[node.name] = node
    spawned: dict[str, TreeNode] = {}
    for node in nodes:
        # A headcount under 1 is a field error of its own; count such a member once.
        for name in _spawned(node.name, _count(node)) if node.name else []:
            other = spawned.setdefault(name, node)
            if other is node or (_count(node) == 1 and _count(other) == 1):
                continue  # a repeated declared name, reported above
            where = ("headcount",) if _count(node) > 1 else ("card", "config", "name")
            problems.append(
                (
                    (*node.location, *where),
                    f"agent name {name!r} would be spawned twice: a member with "
                    "headcount > 1 is renamed <name>_<i>, which collides with another "
                    "member's name",
                )
            )
            break
    return problems


def _raw_members(value: Any, location: Location) -> Iterator[TreeNode]:
    if not isinstance(value, dict):
        return
    card = value.get("card")
    config = card.get("config") if isinstance(card, dict) else None
    name = config.get("name") if isinstance(config, dict) else None
    headcount = value.get("headcount", 1)
    if isinstance(name, str):
        yield TreeNode(location, name, headcount if type(headcount) is int else 1)
    children = value.get("members")
    if isinstance(children, list):
        for index, child in enumerate(children):
            yield from _raw_members(child, (*location, "members", index))


def raw_tree_nodes(data: dict[str, Any]) -> list[TreeNode]:
    """The members of an unvalidated card mapping that carry a string name, entry first.

    Malformed members are skipped: field validation reports them.
    """
    nodes = list(_raw_members(data.get("entry_point"), ("entry_point",)))
    members = data.get("members")
    if isinstance(members, list):
        for index, member in enumerate(members):
            nodes.extend(_raw_members(member, ("members", index)))
    return nodes
