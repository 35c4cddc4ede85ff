"""``ContextUpdater``: one ``**Context update N**`` block per turn, diffed against baselines.

The block goes at the end of the model's context, so volatile tool state never touches
the cached system prefix. Which baselines can be trusted is decided from the history
itself: the markers of earlier blocks that are still visible in it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Final

from akgentic.tool.core.context_state import ContextProvider, ContextState
from akgentic.tool.core.observer import weak_observer
from akgentic.tool.errors import ToolObserverGone

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from akgentic.tool.core.observer import ActorToolObserver
    from akgentic.tool.core.state import ToolState

__all__ = ["MARKER_PATTERN", "ContextUpdater", "marker_line"]

logger = logging.getLogger(__name__)

MARKER_PATTERN: Final = re.compile(r"\*\*Context update (\d+)\*\*")
"""Finds the number of every context-update marker in a text."""

_FULL: Final = "current state."
_DELTA: Final = "state has changed since the last update."


def marker_line(number: int, *, full: bool) -> str:
    """The first line of block ``number``: a full snapshot, or changes only."""
    return f"**Context update {number}** — {_FULL if full else _DELTA}"


def _user_prompt_texts(messages: Iterable[object]) -> Iterator[str]:
    # Duck-typed over pydantic-ai's ModelRequest/UserPromptPart so that importing this
    # module never imports the LLM library. Only user-prompt parts are read: that is
    # where the agent appends the blocks, and a marker quoted in a tool result or a
    # model answer proves nothing about delivery.
    for message in messages:
        for part in getattr(message, "parts", None) or ():
            if getattr(part, "part_kind", None) != "user-prompt":
                continue
            content = getattr(part, "content", None)
            if isinstance(content, str):
                yield content
            elif isinstance(content, Sequence):
                yield from (item for item in content if isinstance(item, str))


def highest_marker(messages: Iterable[object]) -> int:
    """The highest block number visible in the user-prompt text of ``messages`` (0: none)."""
    highest = 0
    for text in _user_prompt_texts(messages):
        for match in MARKER_PATTERN.finditer(text):
            highest = max(highest, int(match.group(1)))
    return highest


class ContextUpdater:
    """Composes the per-turn context block of one agent from its cards' providers.

    State lives in the agent's :class:`~akgentic.tool.core.state.ToolState`, read
    through the observer on every call (``observer.state.tool_state``): the baselines
    (last snapshot delivered per provider) and the number of the last block.

    Rules, per provider, each turn:

    - a provider or renderer that raises is skipped (logged) and its baseline kept;
    - a provider returning None contributes nothing;
    - a first-seen state, or one whose class changed, is rendered in full;
    - otherwise ``render_delta(baseline)``; None means unchanged and just refreshes the
      baseline;
    - empty text contributes nothing.

    Only when at least one section is produced does the counter advance, and only the
    providers that contributed have their baselines advanced.

    Before composing, the history is checked (the trust gate): if the stored counter is
    behind the highest visible marker, it catches up and the baselines stay (the next
    delta may repeat what was already said, it never omits); if the stored counter is
    ahead, its last block is no longer visible, so the baselines are dropped and the
    next block is a full snapshot.

    Args:
        observer: The owning agent (held weakly).
        providers: Context providers, keyed by ``__name__`` (names must be unique).
    """

    def __init__(self, observer: ActorToolObserver, providers: Sequence[ContextProvider]) -> None:
        self._observer_ref = weak_observer(observer)
        self._providers: dict[str, ContextProvider] = {}
        for provider in providers:
            name = getattr(provider, "__name__", None)
            if not isinstance(name, str) or not name:
                raise ValueError(f"a context provider needs a __name__: {provider!r}")
            if name in self._providers:
                raise ValueError(f"two context providers are named '{name}'")
            self._providers[name] = provider

    @property
    def provider_names(self) -> list[str]:
        """Keys of the providers, in composition order."""
        return list(self._providers)

    def _tool_state(self) -> ToolState:
        observer = self._observer_ref()
        if observer is None:
            raise ToolObserverGone("the agent that owned this ContextUpdater has been stopped")
        return observer.state.tool_state

    def compose_update(self, messages: Iterable[ModelMessage]) -> str | None:
        """The block to append this turn, or None when there is nothing new.

        ``messages`` is the agent's current history; it is only read. The caller
        appends the returned text as user-prompt content.
        """
        state = self._tool_state()
        self._reconcile(state, messages)
        full = not state.context_baselines
        sections: list[str] = []
        contributed: dict[str, ContextState] = {}
        for name, provider in self._providers.items():
            try:
                snapshot = provider()
            except Exception:
                logger.warning("context provider %r raised; skipped this turn", name, exc_info=True)
                continue
            if snapshot is None:
                continue
            baseline = state.context_baselines.get(name)
            try:
                if baseline is None or type(baseline) is not type(snapshot):
                    text: str | None = snapshot.render_full()
                else:
                    text = snapshot.render_delta(baseline)
                    if text is None:
                        state.context_baselines[name] = _frozen(snapshot)
                        continue
            except Exception:
                logger.warning("rendering %r raised; skipped this turn", name, exc_info=True)
                continue
            if not text:
                continue
            sections.append(text)
            contributed[name] = snapshot
        if not sections:
            return None
        number = state.context_update_seq + 1
        state.context_update_seq = number
        for name, snapshot in contributed.items():
            state.context_baselines[name] = _frozen(snapshot)
        return "\n\n".join([marker_line(number, full=full), *sections])

    def reset(self) -> None:
        """Forget every baseline and restart numbering (for a cleared history)."""
        state = self._tool_state()
        state.context_baselines.clear()
        state.context_update_seq = 0

    @staticmethod
    def _reconcile(state: ToolState, messages: Iterable[object]) -> None:
        visible = highest_marker(messages)
        stored = state.context_update_seq
        if stored < visible:
            # A save was lost: the blocks up to `visible` were delivered. Keep the older
            # baselines; diffing against them repeats rather than omits.
            state.context_update_seq = visible
        elif stored > visible:
            # The last delivered block is gone from the history (compaction, trimming):
            # nothing may be assumed known, so the next block is a full snapshot.
            state.context_baselines.clear()


def _frozen(snapshot: ContextState) -> ContextState:
    # A provider may hand out an object it keeps mutating; the baseline must not move.
    return snapshot.model_copy(deep=True)
