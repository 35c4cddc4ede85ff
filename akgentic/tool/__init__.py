"""ToolCard contracts: how capabilities are declared, wired and served to agents.

This package root is the stable surface for card authors: everything in
:mod:`akgentic.tool.core` is re-exported here. Concrete cards are plugins; their
classes are reachable here too, lazily: ``from akgentic.tool import ShoutTool`` asks
the plugin registry for a card whose class (or registered name) is ``ShoutTool`` and
raises an ImportError naming the distribution to install when none is.
"""

from __future__ import annotations

from typing import Any

from akgentic.tool.core import (
    CARD_KEY,
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    ActorToolObserver,
    BaseToolParam,
    Channels,
    CommandArg,
    CommandDescriptor,
    CommandNotRecognized,
    CommandRegistry,
    CommandsAnnouncedEvent,
    ContextProvider,
    ContextState,
    ContextUpdater,
    RestOfLine,
    RetriableError,
    RoleNotHireableError,
    ToolCard,
    ToolFactory,
    ToolObserver,
    ToolObserverGone,
    ToolState,
    ToolStateCarrier,
    ToolStateEvent,
    ToolStateSequence,
    normalize_system_prompt_to_llm_context,
    resolve_param,
)
from akgentic.tool.lazy import CardNotInstalledError, resolve_card_attribute

__all__ = [
    "CARD_KEY",
    "COMMAND",
    "LLM_CONTEXT",
    "SYSTEM_PROMPT",
    "TOOL_CALL",
    "ActorToolObserver",
    "BaseToolParam",
    "CardNotInstalledError",
    "Channels",
    "CommandArg",
    "CommandDescriptor",
    "CommandNotRecognized",
    "CommandRegistry",
    "CommandsAnnouncedEvent",
    "ContextProvider",
    "ContextState",
    "ContextUpdater",
    "RestOfLine",
    "RetriableError",
    "RoleNotHireableError",
    "ToolCard",
    "ToolFactory",
    "ToolObserver",
    "ToolObserverGone",
    "ToolState",
    "ToolStateCarrier",
    "ToolStateEvent",
    "ToolStateSequence",
    "normalize_system_prompt_to_llm_context",
    "resolve_param",
]


def __getattr__(name: str) -> Any:
    """Resolve a registered card class (``ShoutTool``) or name (``shout``) lazily."""
    return resolve_card_attribute(__name__, name)
