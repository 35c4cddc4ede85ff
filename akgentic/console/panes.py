"""Tool panes of a team's page: the ``akgentic_console_panes`` hook and its fallback.

A pane belongs to a tool card by its registered name. For each card a team's
members carry, the console shows the plugin's pane when one is registered and
otherwise the latest context state that card gave the model, as text. A pane's
blocks are plain data (``text``, ``list``, ``table``, ``graph``, ``tree``);
everything in them is turned into strings here, and the page only ever writes
them as text, so a pane cannot inject markup. A pane with an ``open`` callable
answers for one item of its ``tree`` blocks (a file, say) with more blocks.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message
    from akgentic.plugins import PluginRegistry
    from akgentic.team.card import TeamCard
    from akgentic.team.models import AgentStateSnapshot
    from akgentic.tool.core.card import ToolCard

__all__ = [
    "MAX_BLOCK_ITEMS",
    "PaneBlock",
    "PaneSource",
    "clean_blocks",
    "open_pane_item",
    "pane_sources",
    "replay_tool_state",
    "team_panes",
]

logger = logging.getLogger(__name__)

#: A block as a plugin returns it: ``{"kind": "text" | "list" | "table", ...}``.
PaneBlock = Mapping[str, Any]

#: Items, rows or characters kept per block: a pane is a summary, not a dump.
MAX_BLOCK_ITEMS = 500
_MAX_TEXT = 20_000


@dataclass(frozen=True)
class PaneSource:
    """What a pane's ``render`` reads.

    Attributes:
        team_id: The team shown.
        cards: The team's tool cards of the pane's card name, one per member carrying it.
        members: The names of those members, in the order of ``cards``.
        states: The latest stored state of every agent of the team.
        events: The team's stored messages, oldest first (tool state events
            among them), for panes that replay what changed since a snapshot.
    """

    team_id: UUID
    cards: list[ToolCard] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    states: list[AgentStateSnapshot] = field(default_factory=list)
    events: Sequence[Message] = ()


_Base = TypeVar("_Base")
_Change = TypeVar("_Change")


def replay_tool_state(
    states: Sequence[Any],
    events: Sequence[Any],
    actor_name: str,
    attribute: str,
    base_type: type[_Base],
    change_type: type[_Change],
) -> tuple[_Base | None, list[_Change]]:
    """The newest stored ``attribute`` of a tool actor's state and the changes logged after it.

    A pane that draws a tool actor's data (a board, a graph) starts from the
    latest snapshot of ``actor_name`` whose state holds a ``base_type`` under
    ``attribute`` and applies, in order, the ``change_type`` payloads of the
    tool state events numbered after that snapshot: the pane is then current
    even between checkpoints. Returns ``(None, changes)`` without a snapshot.
    """
    from akgentic.tool.core.event import ToolStateEvent

    base: _Base | None = None
    since = 0
    for snapshot in states:
        state = getattr(snapshot, "state", None)
        value = getattr(state, attribute, None)
        if isinstance(value, base_type) and getattr(snapshot, "name", "") == actor_name:
            base = value
            since = int(getattr(state, "snapshot_seq", 0) or 0)
    changes: list[_Change] = []
    for message in events:
        event = getattr(message, "event", None)
        if not isinstance(event, ToolStateEvent) or event.seq <= since:
            continue
        if isinstance(event.payload, change_type):
            changes.append(event.payload)
            since = event.seq
    return base, changes


def _text(value: object, limit: int = _MAX_TEXT) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def clean_blocks(blocks: object) -> list[dict[str, Any]]:
    """Blocks reduced to strings and known kinds (unknown kinds become text)."""
    if not isinstance(blocks, Sequence) or isinstance(blocks, str | bytes):
        raise TypeError(f"a pane must return a list of blocks, got {type(blocks).__name__}")
    cleaned: list[dict[str, Any]] = []
    for block in list(blocks)[:MAX_BLOCK_ITEMS]:
        if not isinstance(block, Mapping):
            cleaned.append({"kind": "text", "text": _text(block)})
            continue
        kind = block.get("kind")
        if kind == "list":
            items = block.get("items") or []
            cleaned.append({"kind": "list", "items": [_text(i) for i in items][:MAX_BLOCK_ITEMS]})
        elif kind == "table":
            columns = [_text(c, 200) for c in block.get("columns") or []]
            rows = [[_text(cell) for cell in row] for row in (block.get("rows") or [])]
            cleaned.append({"kind": "table", "columns": columns, "rows": rows[:MAX_BLOCK_ITEMS]})
        elif kind == "graph":
            cleaned.append(_clean_graph(block))
        elif kind == "tree":
            cleaned.append(_clean_tree(block))
        else:
            cleaned.append({"kind": "text", "text": _text(block.get("text", ""))})
    return cleaned


def _fields(item: object, names: Sequence[str], limit: int = _MAX_TEXT) -> dict[str, str]:
    found = item if isinstance(item, Mapping) else {}
    return {name: _text(found.get(name, ""), limit) for name in names}


def _clean_graph(block: PaneBlock) -> dict[str, Any]:
    """Nodes (``id``, ``label``, ``group``, ``text``), edges (``source``, ``target``, ``label``).

    Edges between unknown nodes are dropped: the page draws only what it can place.
    """
    nodes = [_fields(n, ("id", "label", "group", "text")) for n in list(block.get("nodes") or [])][
        :MAX_BLOCK_ITEMS
    ]
    known = {n["id"] for n in nodes}
    edges = [
        e
        for e in (_fields(e, ("source", "target", "label")) for e in list(block.get("edges") or []))
        if e["source"] in known and e["target"] in known
    ][:MAX_BLOCK_ITEMS]
    return {"kind": "graph", "nodes": nodes, "edges": edges}


def _clean_tree(block: PaneBlock) -> dict[str, Any]:
    """``items`` of ``key``, ``label``, ``depth`` (an int) and ``openable`` (a bool)."""
    items: list[dict[str, Any]] = []
    for item in list(block.get("items") or [])[:MAX_BLOCK_ITEMS]:
        entry: dict[str, Any] = _fields(item, ("key", "label"), 4_000)
        raw = item if isinstance(item, Mapping) else {}
        depth = raw.get("depth", 0)
        entry["depth"] = depth if isinstance(depth, int) and 0 <= depth < 64 else 0
        entry["openable"] = raw.get("openable") is True
        items.append(entry)
    return {"kind": "tree", "items": items}


def _card_names(registry: PluginRegistry) -> dict[type, str]:
    return {spec.card: name for name, spec in registry.tool_cards().items()}


def _team_cards(team_card: TeamCard, registry: PluginRegistry) -> dict[str, list[tuple[str, Any]]]:
    """Registered card name -> [(member name, card)] over the team's members and profiles."""
    names = _card_names(registry)
    found: dict[str, list[tuple[str, Any]]] = {}
    agent_cards = [node.card for node, _parent in team_card.iter_members()]
    for agent_card in [*agent_cards, *team_card.agent_profiles]:
        for tool in getattr(agent_card.config, "tools", None) or []:
            name = names.get(type(tool), type(tool).__name__)
            found.setdefault(name, []).append((agent_card.config.name, tool))
    return found


def _context_texts(states: Sequence[AgentStateSnapshot]) -> dict[str, list[str]]:
    """Provider key -> the latest rendered context state of every agent that has one."""
    texts: dict[str, list[str]] = {}
    for snapshot in states:
        tool_state = getattr(snapshot.state, "tool_state", None)
        baselines = getattr(tool_state, "context_baselines", None) or {}
        for key, state in baselines.items():
            try:
                text = state.render_full()
            except Exception as exc:  # a third-party state: show the failure, keep the page
                text = f"(cannot render: {type(exc).__name__}: {exc})"
            if text:
                texts.setdefault(key, []).append(f"{snapshot.name or snapshot.agent_id}: {text}")
    return texts


def _fallback(cards: list[tuple[str, Any]], contexts: dict[str, list[str]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for member, card in cards:
        keys: list[str] = []
        try:
            keys = [getattr(p, "__name__", "") for p in card.get_context_states()]
        except Exception as exc:
            logger.debug("context providers of %s unavailable: %s", type(card).__name__, exc)
        lines = [line for key in keys for line in contexts.get(key, [])]
        text = "\n\n".join(lines) if lines else f"{member}: no context state recorded yet"
        blocks.append({"kind": "text", "text": _text(text)})
    return blocks


def _specs_by_card(registry: PluginRegistry) -> dict[str, list[Any]]:
    try:
        specs = dict(registry.console_panes())
    except Exception as exc:
        logger.warning("console panes unavailable: %s", exc)
        specs = {}
    by_card: dict[str, list[Any]] = {}
    for spec in specs.values():
        by_card.setdefault(spec.card, []).append(spec)
    return by_card


def pane_sources(
    team_id: UUID,
    team_card: TeamCard,
    states: Sequence[AgentStateSnapshot],
    registry: PluginRegistry,
    events: Sequence[Message] = (),
) -> list[tuple[str, Any, PaneSource]]:
    """``(card name, pane spec, source)`` of every registered pane the team has a card for."""
    cards = _team_cards(team_card, registry)
    by_card = _specs_by_card(registry)
    found: list[tuple[str, Any, PaneSource]] = []
    for card_name in sorted(cards):
        members = cards[card_name]
        for spec in by_card.get(card_name, []):
            source = PaneSource(
                team_id=team_id,
                cards=[card for _m, card in members],
                members=[m for m, _card in members],
                states=list(states),
                events=events,
            )
            found.append((card_name, spec, source))
    return found


def team_panes(
    team_id: UUID,
    team_card: TeamCard,
    states: Sequence[AgentStateSnapshot],
    registry: PluginRegistry,
    events: Sequence[Message] = (),
) -> list[dict[str, Any]]:
    """Every pane: ``{"name", "card", "title", "source", "blocks", "openable"[, "error"]}``.

    ``source`` is ``"plugin"`` for a registered pane and ``"context"`` for the
    fallback. A pane whose render raises is returned with its ``error`` and no
    blocks; a registry that cannot list panes (a conflict) leaves only fallbacks.
    """
    cards = _team_cards(team_card, registry)
    with_pane: set[str] = set()
    panes: list[dict[str, Any]] = []
    for card_name, spec, source in pane_sources(team_id, team_card, states, registry, events):
        with_pane.add(card_name)
        pane: dict[str, Any] = {
            "name": spec.name,
            "card": card_name,
            "title": spec.title,
            "source": "plugin",
            "blocks": [],
            "openable": spec.open is not None,
        }
        try:
            pane["blocks"] = clean_blocks(spec.render(source))
        except Exception as exc:  # a third-party pane: report it in the pane only
            pane["error"] = f"{type(exc).__name__}: {exc}"
        panes.append(pane)
    contexts = _context_texts(states)
    for card_name in sorted(set(cards) - with_pane):
        panes.append(
            {
                "name": f"context:{card_name}",
                "card": card_name,
                "title": card_name,
                "source": "context",
                "blocks": _fallback(cards[card_name], contexts),
                "openable": False,
            }
        )
    panes.sort(key=lambda p: (p["card"], p["source"] != "plugin"))
    return panes


def open_pane_item(
    team_id: UUID,
    team_card: TeamCard,
    states: Sequence[AgentStateSnapshot],
    registry: PluginRegistry,
    name: str,
    key: str,
    events: Sequence[Message] = (),
) -> list[dict[str, Any]] | None:
    """The blocks pane ``name`` gives for item ``key``; ``None``: no such openable pane.

    The pane's ``open`` decides what a key means and refuses what it must not
    show (a ``ValueError`` or ``LookupError``, passed on to the caller).
    """
    for _card_name, spec, source in pane_sources(team_id, team_card, states, registry, events):
        if spec.name == name and spec.open is not None:
            return clean_blocks(spec.open(source, key))
    return None
