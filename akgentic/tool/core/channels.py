"""The four channels through which a tool card's capabilities reach an agent's world."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

__all__ = [
    "COMMAND",
    "LLM_CONTEXT",
    "SYSTEM_PROMPT",
    "TOOL_CALL",
    "Channels",
    "normalize_system_prompt_to_llm_context",
]


class Channels(StrEnum):
    """Where a capability is served; a param's ``expose`` set lists its channels.

    - ``TOOL_CALL``: a function the model calls during its reasoning loop.
    - ``SYSTEM_PROMPT``: static text rendered once into the cached system prefix.
    - ``LLM_CONTEXT``: volatile state, delivered as per-turn deltas at the end of the
      context (see :class:`~akgentic.tool.core.context_update.ContextUpdater`).
    - ``COMMAND``: a named callable run by code or by a human typing ``/name``.

    Each channel is served by exactly one :class:`~akgentic.tool.core.card.ToolCard`
    hook; a capability exposed on a channel whose hook the card does not implement is
    simply not served.
    """

    SYSTEM_PROMPT = "system_prompt"
    TOOL_CALL = "tool_call"
    COMMAND = "command"
    LLM_CONTEXT = "llm_context"


SYSTEM_PROMPT = Channels.SYSTEM_PROMPT
TOOL_CALL = Channels.TOOL_CALL
COMMAND = Channels.COMMAND
LLM_CONTEXT = Channels.LLM_CONTEXT


def normalize_system_prompt_to_llm_context(expose: Iterable[Channels]) -> set[Channels]:
    """Rewrite a stored ``SYSTEM_PROMPT`` exposure to ``LLM_CONTEXT``.

    For a capability whose content moved from the system prompt to context state: a
    card saved before the move still says ``system_prompt``, a channel the card no
    longer serves, so the capability would silently disappear. Attach this as an
    ``after`` field validator of ``expose`` on that one param class only; applying it
    globally would drag static text out of the cached prefix.

    Example::

        class GetBoard(BaseToolParam):
            expose: set[Channels] = {LLM_CONTEXT}

            @field_validator("expose")
            @classmethod
            def _moved_to_context(cls, value: set[Channels]) -> set[Channels]:
                return normalize_system_prompt_to_llm_context(value)
    """
    channels = {Channels(channel) for channel in expose}
    if Channels.SYSTEM_PROMPT in channels:
        channels.discard(Channels.SYSTEM_PROMPT)
        channels.add(Channels.LLM_CONTEXT)
    return channels
