"""Ordering tool cards so that every card is wired after the cards it depends on."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from akgentic.tool.core.card import ToolCard

__all__ = ["sort_by_dependencies"]


def sort_by_dependencies(cards: Sequence[ToolCard]) -> list[ToolCard]:
    """Return ``cards`` in an order where each card follows everything it depends on.

    Deterministic: among cards whose dependencies are satisfied, the one given first
    goes first (Kahn's algorithm with a FIFO queue). A dependency names a card class
    (``type(card).__name__``); several cards of one class all satisfy it.

    Raises:
        ValueError: A card depends on a class that is not among ``cards``, or the
            dependencies form a cycle. Nothing has been wired when this is raised.
    """
    present: dict[str, list[int]] = {}
    for index, card in enumerate(cards):
        present.setdefault(type(card).__name__, []).append(index)

    dependents: dict[int, list[int]] = {index: [] for index in range(len(cards))}
    waiting: list[int] = [0] * len(cards)
    for index, card in enumerate(cards):
        for dependency in dict.fromkeys(card.depends_on):
            providers = present.get(dependency)
            if providers is None:
                raise ValueError(
                    f"{type(card).__name__} depends on {dependency}, which is not among "
                    f"the agent's tool cards ({', '.join(present) or 'none'}); add a "
                    f"{dependency} card"
                )
            for provider in providers:
                if provider == index:
                    raise ValueError(f"{dependency} cannot depend on itself")
                dependents[provider].append(index)
                waiting[index] += 1

    ready = deque(index for index in range(len(cards)) if waiting[index] == 0)
    order: list[int] = []
    while ready:
        index = ready.popleft()
        order.append(index)
        for dependent in dependents[index]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                ready.append(dependent)
    if len(order) != len(cards):
        stuck = sorted({type(cards[i]).__name__ for i in range(len(cards)) if waiting[i]})
        raise ValueError(f"tool card dependencies form a cycle among: {', '.join(stuck)}")
    return [cards[index] for index in order]
