"""Hook implementation of the skill plugin: registers :class:`SkillTool` as ``skill``."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import ConsolePaneSpec, ToolCardSpec, hookimpl
from akgentic_skill.card import SkillTool
from akgentic_skill.pane import render_skills_pane


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


@hookimpl
def akgentic_console_panes() -> Iterable[ConsolePaneSpec]:
    """The ``skill`` card's pane of the web console."""
    return [ConsolePaneSpec(name="skill", card="skill", title="Skills", render=render_skills_pane)]
