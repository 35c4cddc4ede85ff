"""A bound on what YAML aliases may cost before a card is built from them.

An alias (``*name``) repeats the node its anchor (``&name``) marks. The parser
shares that node, so a short file can describe a huge tree: nine nested lists of
nine aliases each are a kilobyte of text and 387 million nodes once anything walks
them (validation, deserialization, a copy). :func:`alias_overrun` reads the
parser's event stream once, keeps the expanded size of every anchored node and
stops at the first alias that takes the nodes repeated through aliases past a
budget; a recursive alias (an anchor used inside its own node) is refused too,
since walking it never ends. A document without aliases is never refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

__all__ = ["ALIAS_NODE_BUDGET", "AliasOverrun", "alias_overrun"]

#: Nodes a card may repeat through aliases; hand-written cards use a handful.
ALIAS_NODE_BUDGET = 10_000


@dataclass(frozen=True)
class AliasOverrun:
    """Why a document's aliases were refused, and where (1-based line and column)."""

    line: int
    column: int
    message: str


def _mark(event: yaml.Event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def alias_overrun(
    text: str,
    loader: type[yaml.SafeLoader],
    budget: int = ALIAS_NODE_BUDGET,
) -> AliasOverrun | None:
    """The first alias of ``text`` that goes over ``budget`` repeated nodes, if any.

    Raises :class:`yaml.YAMLError` when ``text`` is not YAML. An alias to an
    unknown anchor is left to the composer, which reports it with its line.
    """
    sizes: dict[str, int] = {}
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, nodes counted before it)
    expanded = 0
    repeated = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            name = event.anchor or ""
            size = sizes.get(name)
            if size is None:
                if any(anchor == name for anchor, _ in open_nodes):
                    line, column = _mark(event)
                    return AliasOverrun(
                        line, column, f"alias *{name} is used inside its own anchor (recursive)"
                    )
                continue
            expanded += size
            repeated += size
            if repeated > budget:
                line, column = _mark(event)
                return AliasOverrun(
                    line,
                    column,
                    f"alias *{name} repeats {size} node(s), taking the card past "
                    f"{budget} nodes repeated through aliases; write the values out "
                    "or use fewer nested aliases",
                )
        elif isinstance(event, yaml.ScalarEvent):
            expanded += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            open_nodes.append((event.anchor, expanded))
            expanded += 1
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            anchor, before = open_nodes.pop()
            if anchor:
                sizes[anchor] = expanded - before
    return None
