"""The contracts every tool card is written against.

Import from here (or from :mod:`akgentic.tool`): cards, params, channels, the factory,
context state, observers, events and the command registry. Deferred results are not
re-exported: import :mod:`akgentic.tool.core.deferred` directly (it needs the actor
runtime).
"""

from akgentic.tool.commands import CommandRegistry, RestOfLine
from akgentic.tool.core.card import CARD_KEY, ToolCard
from akgentic.tool.core.catalog import (
    CapabilityInfo,
    CardInfo,
    card_capabilities,
    card_json_schema,
    describe_cards,
    installed_cards,
    lookup_card_class,
    registered_card_name,
)
from akgentic.tool.core.channels import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    Channels,
    normalize_system_prompt_to_llm_context,
)
from akgentic.tool.core.context_state import ContextProvider, ContextState
from akgentic.tool.core.context_update import ContextUpdater
from akgentic.tool.core.dependencies import sort_by_dependencies
from akgentic.tool.core.event import (
    CommandArg,
    CommandDescriptor,
    CommandsAnnouncedEvent,
    ToolStateEvent,
    ToolStateSequence,
)
from akgentic.tool.core.factory import ToolFactory, wrap_retriable
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver, ToolStateCarrier
from akgentic.tool.core.params import BaseToolParam, resolve_param
from akgentic.tool.core.state import ToolState
from akgentic.tool.errors import (
    CommandNotRecognized,
    RetriableError,
    RoleNotHireableError,
    ToolObserverGone,
)

__all__ = [
    "CARD_KEY",
    "COMMAND",
    "LLM_CONTEXT",
    "SYSTEM_PROMPT",
    "TOOL_CALL",
    "ActorToolObserver",
    "BaseToolParam",
    "CapabilityInfo",
    "CardInfo",
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
    "card_capabilities",
    "card_json_schema",
    "describe_cards",
    "installed_cards",
    "lookup_card_class",
    "normalize_system_prompt_to_llm_context",
    "registered_card_name",
    "resolve_param",
    "sort_by_dependencies",
    "wrap_retriable",
]
