"""Compaction strategies: how older history is folded to free context space.

A strategy looks at the durable history and returns a :class:`CompactionResult`
saying how many leading messages to replace and with what summary. The fold
itself is always :meth:`ContextManager.fold_compaction`, applied live and again
on replay, so a strategy never edits messages directly.

Strategies only fold at a turn boundary (before a user request that answers no
tool call), so a tool call and its return are never separated.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from akgentic.llm.config import CompactionConfig, ModelConfig

if TYPE_CHECKING:
    from pydantic_ai.models import Model

__all__ = [
    "COMPACTION_STRATEGIES",
    "SUMMARY_INSTRUCTIONS",
    "CompactionResult",
    "CompactionStrategy",
    "NoOpCompaction",
    "SlidingWindowCompaction",
    "SummarizeCompaction",
    "create_compaction",
    "estimate_tokens",
    "fold_point",
]

logger = logging.getLogger(__name__)

SUMMARY_INSTRUCTIONS: dict[str, str] = {
    "v1": (
        "You condense a conversation between a user, an assistant and its tools so the "
        "assistant can continue the work with much less context. Keep decisions, facts, "
        "open tasks, names, identifiers and results that later turns may rely on; drop "
        "chit-chat and repetition. Write plain prose or bullet points, at most about "
        "{target_tokens} tokens, and nothing else."
    ),
}


@dataclass(frozen=True)
class CompactionResult:
    """A strategy's decision: fold ``replaced_message_count`` leading messages into ``summary``."""

    summary: str
    replaced_message_count: int
    tokens_after: int | None = None


class CompactionStrategy(Protocol):
    """Decides how to fold a history. ``id`` is persisted in compaction events."""

    id: str

    async def compact(self, messages: Sequence[ModelMessage]) -> CompactionResult:
        """Return the fold to apply to ``messages`` (replaced count 0 means nothing to do)."""
        ...


StrategyFactory = Callable[[CompactionConfig, ModelConfig, "Model | None"], CompactionStrategy]


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """A rough token count (about four characters per token); no tokenizer needed."""
    chars = 0
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                chars += len(content)
            elif isinstance(part, ToolCallPart):
                chars += len(part.args_as_json_str()) + len(part.tool_name)
            elif content is not None:
                chars += len(str(content))
    return chars // 4


def _is_turn_start(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and not any(
        p.part_kind in ("tool-return", "retry-prompt") for p in message.parts
    )


def fold_point(messages: Sequence[ModelMessage], keep_recent: int) -> int:
    """The largest safe count of leading messages to fold while keeping ``keep_recent``.

    Safe means the kept tail starts a turn: no tool return in it answers a call
    that would be folded away. Folding everything is always safe between runs.
    """
    if keep_recent <= 0:
        return len(messages)
    limit = len(messages) - keep_recent
    for i in range(limit, 0, -1):
        if _is_turn_start(messages[i]):
            return i
    return 0


def _non_system_count(messages: Sequence[ModelMessage]) -> int:
    return sum(
        1
        for m in messages
        if not (
            isinstance(m, ModelRequest) and all(isinstance(p, SystemPromptPart) for p in m.parts)
        )
    )


class NoOpCompaction:
    """Never folds anything."""

    id = "none"

    async def compact(self, messages: Sequence[ModelMessage]) -> CompactionResult:
        """Always nothing to do."""
        return CompactionResult(summary="", replaced_message_count=0)


class SlidingWindowCompaction:
    """Drops older turns and keeps the last ``keep_recent_messages`` (at a safe boundary)."""

    id = "sliding_window"

    def __init__(self, keep_recent_messages: int) -> None:
        self.keep_recent_messages = keep_recent_messages

    async def compact(self, messages: Sequence[ModelMessage]) -> CompactionResult:
        """Fold everything before the kept tail into a one-line note."""
        count = fold_point(messages, self.keep_recent_messages)
        if _non_system_count(messages[:count]) == 0:
            return CompactionResult(summary="", replaced_message_count=0)
        summary = f"[Sliding window: dropped {count} earlier message(s)]"
        return CompactionResult(
            summary=summary,
            replaced_message_count=count,
            tokens_after=estimate_tokens(messages[count:]),
        )


def render_transcript(messages: Sequence[ModelMessage]) -> str:
    """A plain-text transcript of the non-system content, fed to the summarizer."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                lines.append(f"USER: {part.content}")
            elif isinstance(part, TextPart):
                lines.append(f"ASSISTANT: {part.content}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"TOOL CALL {part.tool_name}: {part.args_as_json_str()}")
            elif isinstance(part, ToolReturnPart):
                lines.append(f"TOOL RESULT {part.tool_name}: {part.model_response_str()}")
    return "\n".join(lines)


class SummarizeCompaction:
    """Asks a model to summarise the older history; falls back to a truncation note on error."""

    id = "summarize"

    def __init__(self, cfg: CompactionConfig, model: Model | None) -> None:
        self.cfg = cfg
        self._model = model
        template = SUMMARY_INSTRUCTIONS.get(cfg.summarizer_prompt_version)
        if template is None:
            raise ValueError(
                f"unknown summarizer_prompt_version {cfg.summarizer_prompt_version!r} "
                f"(known: {', '.join(SUMMARY_INSTRUCTIONS)})"
            )
        self.instructions = template.format(target_tokens=cfg.summary_target_tokens)
        self._agent: Any = None

    def _summarizer(self) -> Any:
        if self._agent is None:
            from pydantic_ai import Agent

            self._agent = Agent(self._model, instructions=self.instructions, output_type=str)
        return self._agent

    async def compact(self, messages: Sequence[ModelMessage]) -> CompactionResult:
        """Summarise everything before the kept tail with the summary model."""
        count = fold_point(messages, self.cfg.keep_recent_messages)
        folded = messages[:count]
        if _non_system_count(folded) == 0:
            return CompactionResult(summary="", replaced_message_count=0)
        try:
            result = await self._summarizer().run(render_transcript(folded))
            summary = str(result.output).strip()
            if not summary:
                raise ValueError("the summarizer returned an empty text")
        except Exception as exc:
            logger.warning("Summarization failed, truncating instead: %s", exc)
            summary = (
                f"[NOTE: {count} earlier conversation message(s) were truncated because the "
                "summary could not be produced.]"
            )
        return CompactionResult(
            summary=summary,
            replaced_message_count=count,
            tokens_after=estimate_tokens(messages[count:]) + len(summary) // 4,
        )


def none_strategy(
    cfg: CompactionConfig, model_cfg: ModelConfig, model: Model | None
) -> NoOpCompaction:
    """Factory of the ``none`` strategy."""
    return NoOpCompaction()


def sliding_window_strategy(
    cfg: CompactionConfig, model_cfg: ModelConfig, model: Model | None
) -> SlidingWindowCompaction:
    """Factory of the ``sliding_window`` strategy."""
    return SlidingWindowCompaction(cfg.keep_recent_messages)


def summarize_strategy(
    cfg: CompactionConfig, model_cfg: ModelConfig, model: Model | None
) -> SummarizeCompaction:
    """Factory of the ``summarize`` strategy."""
    return SummarizeCompaction(cfg, model)


COMPACTION_STRATEGIES: dict[str, StrategyFactory] = {
    "none": none_strategy,
    "sliding_window": sliding_window_strategy,
    "summarize": summarize_strategy,
}


def create_compaction(
    cfg: CompactionConfig, model_cfg: ModelConfig, model: Model | None
) -> CompactionStrategy:
    """Build the strategy ``cfg.strategy`` names (a registry id or a dotted factory path).

    ``model`` is the model the summarizer uses (already built for ``model_cfg``).
    """
    factory = COMPACTION_STRATEGIES.get(cfg.strategy)
    if factory is None:
        if "." not in cfg.strategy:
            raise ValueError(
                f"unknown compaction strategy {cfg.strategy!r} "
                f"(registered: {', '.join(sorted(COMPACTION_STRATEGIES))}; "
                "or give a dotted 'module.factory' path)"
            )
        module_name, _, attr = cfg.strategy.rpartition(".")
        factory = getattr(importlib.import_module(module_name), attr)
    return factory(cfg, model_cfg, model)

