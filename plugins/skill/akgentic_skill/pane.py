"""The skill card's pane in the web console: the menu each member carries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.plugin_api import PaneSource

__all__ = ["render_skills_pane"]


def render_skills_pane(source: PaneSource) -> list[dict[str, Any]]:
    """One table row per skill: the member carrying it, its name and its description."""
    from akgentic_skill.card import Skills

    rows: list[list[str]] = []
    for member, card in zip(source.members, source.cards, strict=False):
        skills = getattr(card, "skills", None)
        if isinstance(skills, Skills):
            rows.extend([member, entry.name, entry.description] for entry in skills.skills)
    if not rows:
        return [{"kind": "text", "text": "No skills are configured."}]
    return [{"kind": "table", "columns": ["member", "skill", "description"], "rows": rows}]
