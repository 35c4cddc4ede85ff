"""Hook implementation of the skill plugin: registers :class:`SkillTool` as ``skill``."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugins import ToolCardSpec, hookimpl
from akgentic_skill.card import SkillTool


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``skill`` card and the ``akgentic.tool.skill`` import path."""
    return [
        ToolCardSpec(
            name="skill",
            card=SkillTool,
            description="A skill menu in the prompt; the model loads a skill's text by name.",
            import_paths=("akgentic.tool.skill",),
        )
    ]
