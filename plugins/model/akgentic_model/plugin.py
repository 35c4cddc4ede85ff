"""Hook implementation of the model plugin: registers :class:`ModelTool` as ``model``."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import ToolCardSpec, hookimpl
from akgentic_model.card import ModelTool


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register ``model``; ``akgentic.tool.model`` (a kernel module) forwards to it."""
    return [
        ToolCardSpec(
            name="model",
            card=ModelTool,
            description="List the agent's model roster and switch models at run time.",
            import_paths=("akgentic.tool.model",),
        )
    ]
