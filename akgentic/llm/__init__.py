"""akgentic.llm: the bridge between akgentic agents and pydantic-ai.

Every public name is loaded the first time it is accessed. The team card imports
``akgentic.llm.team_budget`` for its ``budget:`` block, so the package itself must cost
nothing: building the configuration and event models here made ``import akgentic.team``
a quarter slower. ``from akgentic.llm import Name`` works as before, and nothing that
needs pydantic-ai or a provider SDK (``ReactAgent``, ``create_model``...) is imported
until it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from akgentic._lazy import lazy_exports

if TYPE_CHECKING:
    from akgentic.llm.agent import ReactAgent, UserPrompt
    from akgentic.llm.budget import DEFAULT_CONCLUSION_REASON, LifetimeBudget, LimitRecovery
    from akgentic.llm.compaction import (
        COMPACTION_STRATEGIES,
        SUMMARY_INSTRUCTIONS,
        CompactionResult,
        CompactionStrategy,
        create_compaction,
    )
    from akgentic.llm.config import (
        AgentUsageLimits,
        CompactionConfig,
        HttpClientConfig,
        LlmSettings,
        ModelConfig,
        OpenRouterRouting,
        ReactAgentConfig,
        RuntimeConfig,
        RunUsageLimits,
        model_roster_key,
        normalize_model_roster,
        validate_unique_roster_keys,
    )
    from akgentic.llm.context import ContextManager, ContextObserver
    from akgentic.llm.errors import (
        AgentUsageLimitError,
        ContextOverflowError,
        ModelSwitchError,
        ReplyTruncatedError,
        RunCancelledError,
        RunStoppedError,
        RunUsageLimitError,
        TurnFailedError,
        UsageLimitError,
    )
    from akgentic.llm.events import (
        LlmContextClearedEvent,
        LlmContextCompactedEvent,
        LlmMessageEvent,
        LlmMessageWithheldEvent,
        LlmSystemPromptEvent,
        LlmUsageEvent,
        SystemPromptPartSnapshot,
        ToolCallEvent,
        ToolReturnEvent,
        TurnFailed,
    )
    from akgentic.llm.failures import describe_failure
    from akgentic.llm.output import MergeableOutput
    from akgentic.llm.pricing import (
        AgentUsageSummary,
        ModelUsage,
        RunUsageSummary,
        aggregate_usage,
        estimate_cost,
    )
    from akgentic.llm.prompts import (
        PromptTemplate,
        current_datetime_prompt,
        json_output_reminder_prompt,
    )
    from akgentic.llm.providers import create_model, create_model_settings, get_output_type
    from akgentic.llm.run_hooks import RunHook, RunView

_LAZY: dict[str, str] = {
    "AgentUsageLimits": "akgentic.llm.config",
    "CompactionConfig": "akgentic.llm.config",
    "HttpClientConfig": "akgentic.llm.config",
    "LlmSettings": "akgentic.llm.config",
    "ModelConfig": "akgentic.llm.config",
    "OpenRouterRouting": "akgentic.llm.config",
    "ReactAgentConfig": "akgentic.llm.config",
    "RuntimeConfig": "akgentic.llm.config",
    "RunUsageLimits": "akgentic.llm.config",
    "model_roster_key": "akgentic.llm.config",
    "normalize_model_roster": "akgentic.llm.config",
    "validate_unique_roster_keys": "akgentic.llm.config",
    "AgentUsageLimitError": "akgentic.llm.errors",
    "ContextOverflowError": "akgentic.llm.errors",
    "ModelSwitchError": "akgentic.llm.errors",
    "ReplyTruncatedError": "akgentic.llm.errors",
    "RunCancelledError": "akgentic.llm.errors",
    "RunStoppedError": "akgentic.llm.errors",
    "RunUsageLimitError": "akgentic.llm.errors",
    "TurnFailedError": "akgentic.llm.errors",
    "UsageLimitError": "akgentic.llm.errors",
    "LlmContextClearedEvent": "akgentic.llm.events",
    "LlmContextCompactedEvent": "akgentic.llm.events",
    "LlmMessageEvent": "akgentic.llm.events",
    "LlmMessageWithheldEvent": "akgentic.llm.events",
    "LlmSystemPromptEvent": "akgentic.llm.events",
    "LlmUsageEvent": "akgentic.llm.events",
    "SystemPromptPartSnapshot": "akgentic.llm.events",
    "ToolCallEvent": "akgentic.llm.events",
    "ToolReturnEvent": "akgentic.llm.events",
    "TurnFailed": "akgentic.llm.events",
    "MergeableOutput": "akgentic.llm.output",
    "PromptTemplate": "akgentic.llm.prompts",
    "current_datetime_prompt": "akgentic.llm.prompts",
    "json_output_reminder_prompt": "akgentic.llm.prompts",
    "RunHook": "akgentic.llm.run_hooks",
    "RunView": "akgentic.llm.run_hooks",
    "ReactAgent": "akgentic.llm.agent",
    "UserPrompt": "akgentic.llm.agent",
    "DEFAULT_CONCLUSION_REASON": "akgentic.llm.budget",
    "LifetimeBudget": "akgentic.llm.budget",
    "LimitRecovery": "akgentic.llm.budget",
    "COMPACTION_STRATEGIES": "akgentic.llm.compaction",
    "SUMMARY_INSTRUCTIONS": "akgentic.llm.compaction",
    "CompactionResult": "akgentic.llm.compaction",
    "CompactionStrategy": "akgentic.llm.compaction",
    "create_compaction": "akgentic.llm.compaction",
    "ContextManager": "akgentic.llm.context",
    "ContextObserver": "akgentic.llm.context",
    "AgentUsageSummary": "akgentic.llm.pricing",
    "ModelUsage": "akgentic.llm.pricing",
    "RunUsageSummary": "akgentic.llm.pricing",
    "aggregate_usage": "akgentic.llm.pricing",
    "estimate_cost": "akgentic.llm.pricing",
    "create_model": "akgentic.llm.providers",
    "create_model_settings": "akgentic.llm.providers",
    "get_output_type": "akgentic.llm.providers",
    "describe_failure": "akgentic.llm.failures",
}

__all__ = [
    "COMPACTION_STRATEGIES",
    "DEFAULT_CONCLUSION_REASON",
    "SUMMARY_INSTRUCTIONS",
    "AgentUsageLimitError",
    "AgentUsageLimits",
    "AgentUsageSummary",
    "CompactionConfig",
    "CompactionResult",
    "CompactionStrategy",
    "ContextManager",
    "ContextObserver",
    "ContextOverflowError",
    "HttpClientConfig",
    "LifetimeBudget",
    "LimitRecovery",
    "LlmContextClearedEvent",
    "LlmContextCompactedEvent",
    "LlmMessageEvent",
    "LlmMessageWithheldEvent",
    "LlmSettings",
    "LlmSystemPromptEvent",
    "LlmUsageEvent",
    "MergeableOutput",
    "ModelConfig",
    "ModelSwitchError",
    "ModelUsage",
    "OpenRouterRouting",
    "PromptTemplate",
    "ReactAgent",
    "ReactAgentConfig",
    "ReplyTruncatedError",
    "RunCancelledError",
    "RunHook",
    "RunStoppedError",
    "RunUsageLimitError",
    "RunUsageLimits",
    "RunUsageSummary",
    "RunView",
    "RuntimeConfig",
    "SystemPromptPartSnapshot",
    "ToolCallEvent",
    "ToolReturnEvent",
    "TurnFailed",
    "TurnFailedError",
    "UsageLimitError",
    "UserPrompt",
    "aggregate_usage",
    "create_compaction",
    "create_model",
    "create_model_settings",
    "current_datetime_prompt",
    "describe_failure",
    "estimate_cost",
    "get_output_type",
    "json_output_reminder_prompt",
    "model_roster_key",
    "normalize_model_roster",
    "validate_unique_roster_keys",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
