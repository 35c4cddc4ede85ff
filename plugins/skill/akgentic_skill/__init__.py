"""The ``skill`` card: a skill menu in the system prompt, bodies loaded with ``use_skill``.

Also importable as ``akgentic.tool.skill`` (a seed import path this plugin serves).
"""

from akgentic_skill.card import MENU_HEADER, REFERENCE_HEADER, SkillEntry, Skills, SkillTool

__all__ = ["MENU_HEADER", "REFERENCE_HEADER", "SkillEntry", "SkillTool", "Skills"]
