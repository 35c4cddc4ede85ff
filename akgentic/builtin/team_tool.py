"""The ``team-tool`` built-in plugin: registers TeamTool as the ``team`` card.

Every BaseAgent carries TeamTool, so the kernel ships it, registered through the same
entry-point group as any plugin (disable it with ``AKGENTIC_DISABLE_PLUGINS=team-tool``;
agents then still carry the card, it just cannot be named in YAML).
"""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugins import ToolCardSpec, hookimpl


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register :class:`~akgentic.tool.team.TeamTool` as ``team``."""
    from akgentic.tool.team import TeamTool

    return [
        ToolCardSpec(
            name="team",
            card=TeamTool,
            description="Hire and fire members, the roster, the role catalog, who is busy",
        )
    ]
