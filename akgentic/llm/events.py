"""The events the LLM layer reports about an agent's conversation.

These classes are persisted: the agent layer wraps each one in an orchestrator
event, and the core serializer stores it as its fields plus
``"__model__": "akgentic.llm.events.<Class>"``. That dotted path is read back
forever, so this module and these class names must never move or be renamed.

All events are frozen dataclasses with plain fields. ``LlmMessageEvent.message``
holds a pydantic-ai ``ModelRequest``/``ModelResponse`` (themselves dataclasses,
so the core serializer tags them the same way); it also accepts pydantic-ai's own
dict form (``ModelMessagesTypeAdapter`` / ``dataclasses.asdict``) and turns it
back into a message, so the events survive any JSON-ish store.

Importing this module does not import pydantic-ai.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
else:  # resolved lazily; keeps the import of this module cheap
    ModelMessage = Any

__all__ = [
    "LlmContextClearedEvent",
    "LlmContextCompactedEvent",
    "LlmEvent",
    "LlmMessageEvent",
    "LlmMessageWithheldEvent",
    "LlmSystemPromptEvent",
    "LlmUsageEvent",
    "SystemPromptPartSnapshot",
    "ToolCallEvent",
    "ToolReturnEvent",
    "TurnFailed",
]


def message_from_data(data: Any) -> ModelMessage:
    """Turn pydantic-ai's dict form of one message back into the message object."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.validate_python([data])[0]


@dataclass(frozen=True)
class LlmMessageEvent:
    """One message (request to or response from the model) joined the history."""

    message: ModelMessage

    def __post_init__(self) -> None:
        if isinstance(self.message, dict):
            object.__setattr__(self, "message", message_from_data(self.message))


@dataclass(frozen=True)
class ToolCallEvent:
    """The model asked for a tool; ``arguments`` is the call's JSON text."""

    run_id: str
    tool_name: str
    tool_call_id: str
    arguments: str


@dataclass(frozen=True)
class ToolReturnEvent:
    """A tool call got its answer; ``success`` is False for errors and retry requests."""

    run_id: str
    tool_name: str
    tool_call_id: str
    success: bool = True


@dataclass(frozen=True)
class LlmUsageEvent:
    """Tokens and requests one model response cost, with an estimated price in USD."""

    run_id: str
    model_name: str
    provider_name: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 1
    estimated_cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class SystemPromptPartSnapshot:
    """One system-prompt part as it was sent (``dynamic_ref`` names its function, if any)."""

    content: str
    dynamic_ref: str | None = None


@dataclass(frozen=True)
class LlmSystemPromptEvent:
    """The system prompt of a run, recorded only when it differs from the last one seen."""

    run_id: str
    parts: tuple[SystemPromptPartSnapshot, ...]
    content_hash: str


@dataclass(frozen=True)
class LlmContextCompactedEvent:
    """Older history was folded into ``summary``.

    Replay applies the same fold as the live compaction did (see
    ``ContextManager.fold_compaction``), so the summary message itself is never
    persisted as a separate :class:`LlmMessageEvent`.
    """

    run_id: str
    strategy_id: str
    summary: str
    replaced_message_count: int
    summarizer_prompt_version: str = ""
    tokens_before: int | None = None
    tokens_after: int | None = None


@dataclass(frozen=True)
class LlmContextClearedEvent:
    """The whole history was dropped (the system prompt comes back on the next run)."""

    run_id: str
    cleared_message_count: int


@dataclass(frozen=True)
class LlmMessageWithheldEvent:
    """The last request of run ``run_id`` was too large for the model's context.

    Its user-prompt and tool-return contents are replaced by ``note`` (which says
    how large they were), live and on replay, so the oversized content is never
    sent again (see ``ContextManager.withhold_last_request``).
    """

    run_id: str
    note: str
    tokens: int = 0


@dataclass(frozen=True)
class TurnFailed:
    """A turn ended in failure; ``cause`` says why in plain words, on one line.

    ``kind`` names the failure for programs (``truncated``, ``http_error``,
    ``context_length``, ``unknown_tool``, ``bad_arguments``, ``bad_output``,
    ``connection``, ``timeout``, ``usage_limit``, ``model_behavior``, ``error``);
    ``error_type`` is the class name of the original exception.
    """

    cause: str
    kind: str = "error"
    error_type: str = ""


LlmEvent: TypeAlias = (
    LlmMessageEvent
    | ToolCallEvent
    | ToolReturnEvent
    | LlmUsageEvent
    | LlmSystemPromptEvent
    | LlmContextCompactedEvent
    | LlmContextClearedEvent
    | LlmMessageWithheldEvent
    | TurnFailed
)
