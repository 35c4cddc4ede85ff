"""The contracts every tool card is written against.

Import from here (or from :mod:`akgentic.tool`): cards, capabilities, params, channels,
the factory, context state, observers, events and the command registry. Deferred results
are not re-exported: import :mod:`akgentic.tool.core.deferred` directly (it needs the actor
runtime).

Names are exported lazily: each is imported from its module on first use, so that
``import akgentic.tool`` (which re-exports this surface) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.tool.commands import CommandRegistry, RestOfLine
    from akgentic.tool.core.capability import (
        SAME_AS_TOOL,
        Builder,
        Capability,
        CapabilityCard,
        SameAsTool,
        serve_commands,
        serve_tools,
    )
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

_LAZY: dict[str, str] = {
    "CommandRegistry": "akgentic.tool.commands.registry",
    "RestOfLine": "akgentic.tool.commands.rest_of_line",
    "SAME_AS_TOOL": "akgentic.tool.core.capability",
    "Builder": "akgentic.tool.core.capability",
    "Capability": "akgentic.tool.core.capability",
    "CapabilityCard": "akgentic.tool.core.capability",
    "SameAsTool": "akgentic.tool.core.capability",
    "serve_commands": "akgentic.tool.core.capability",
    "serve_tools": "akgentic.tool.core.capability",
    "CARD_KEY": "akgentic.tool.core.card",
    "ToolCard": "akgentic.tool.core.card",
    "CapabilityInfo": "akgentic.tool.core.catalog",
    "CardInfo": "akgentic.tool.core.catalog",
    "card_capabilities": "akgentic.tool.core.catalog",
    "card_json_schema": "akgentic.tool.core.catalog",
    "describe_cards": "akgentic.tool.core.catalog",
    "installed_cards": "akgentic.tool.core.catalog",
    "lookup_card_class": "akgentic.tool.core.catalog",
    "registered_card_name": "akgentic.tool.core.catalog",
    "COMMAND": "akgentic.tool.core.channels",
    "LLM_CONTEXT": "akgentic.tool.core.channels",
    "SYSTEM_PROMPT": "akgentic.tool.core.channels",
    "TOOL_CALL": "akgentic.tool.core.channels",
    "Channels": "akgentic.tool.core.channels",
    "normalize_system_prompt_to_llm_context": "akgentic.tool.core.channels",
    "ContextProvider": "akgentic.tool.core.context_state",
    "ContextState": "akgentic.tool.core.context_state",
    "ContextUpdater": "akgentic.tool.core.context_update",
    "sort_by_dependencies": "akgentic.tool.core.dependencies",
    "CommandArg": "akgentic.tool.core.event",
    "CommandDescriptor": "akgentic.tool.core.event",
    "CommandsAnnouncedEvent": "akgentic.tool.core.event",
    "ToolStateEvent": "akgentic.tool.core.event",
    "ToolStateSequence": "akgentic.tool.core.event",
    "ToolFactory": "akgentic.tool.core.factory",
    "wrap_retriable": "akgentic.tool.core.factory",
    "ActorToolObserver": "akgentic.tool.core.observer",
    "ToolObserver": "akgentic.tool.core.observer",
    "ToolStateCarrier": "akgentic.tool.core.observer",
    "BaseToolParam": "akgentic.tool.core.params",
    "resolve_param": "akgentic.tool.core.params",
    "ToolState": "akgentic.tool.core.state",
    "CommandNotRecognized": "akgentic.tool.errors",
    "RetriableError": "akgentic.tool.errors",
    "RoleNotHireableError": "akgentic.tool.errors",
    "ToolObserverGone": "akgentic.tool.errors",
}

__all__ = [
    "CARD_KEY",
    "COMMAND",
    "LLM_CONTEXT",
    "SAME_AS_TOOL",
    "SYSTEM_PROMPT",
    "TOOL_CALL",
    "ActorToolObserver",
    "BaseToolParam",
    "Builder",
    "Capability",
    "CapabilityCard",
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
    "SameAsTool",
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
    "serve_commands",
    "serve_tools",
    "sort_by_dependencies",
    "wrap_retriable",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
