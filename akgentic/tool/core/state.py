"""``ToolState``: the tool layer's slot in an agent's persisted state."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.tool.core.context_state import ContextState

__all__ = ["ToolState"]


class ToolState(SerializableBaseModel):
    """What the tool layer needs to survive an agent's restart.

    An agent's state carries one of these (as ``tool_state``) and saves it with its
    ordinary checkpoints. Tools read it through the observer on every use
    (``observer.state.tool_state``) and never keep a reference: a restored agent
    replaces its state object wholesale.

    Attributes:
        context_baselines: Last snapshot delivered to the model per context provider
            (keyed by the provider's ``__name__``). A cache that spares repeating
            unchanged state; the message history stays the record.
        context_update_seq: Number of the last ``**Context update N**`` block produced.
        active_model: Roster key (``"provider:model"``) of the model the agent chose at
            run time, or None to use the configured one. Unlike the baselines this is a
            record, and its default keeps older payloads loadable.
    """

    model_config = ConfigDict(extra="forbid")

    context_baselines: dict[str, ContextState] = Field(default_factory=dict)
    context_update_seq: int = 0
    active_model: str | None = None
