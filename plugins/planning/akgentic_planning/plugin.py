"""Hook implementations of the planning plugin: the card and its stored types."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import MessageTypeSpec, ToolCardSpec, hookimpl
from akgentic_planning.card import PlanningTool
from akgentic_planning.console_pane import akgentic_console_panes as akgentic_console_panes

_ORIGINAL = "akgentic.tool.planning"


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``planning`` card and the ``akgentic.tool.planning`` path."""
    return [
        ToolCardSpec(
            name="planning",
            card=PlanningTool,
            description="The team's shared task board, with keyword and semantic search.",
            import_paths=(_ORIGINAL,),
        )
    ]


@hookimpl
def akgentic_message_types() -> Iterable[MessageTypeSpec]:
    """The board's stored payloads, under the original's paths as aliases."""
    from akgentic_planning.models import PlanManagerState, PlanningStateEvent, Task

    return [
        MessageTypeSpec(
            name="PlanningStateEvent",
            message_class=PlanningStateEvent,
            aliases=(f"{_ORIGINAL}.models.PlanningStateEvent", f"{_ORIGINAL}.PlanningStateEvent"),
            description="One change of the team's task board",
        ),
        MessageTypeSpec(
            name="Task",
            message_class=Task,
            aliases=(f"{_ORIGINAL}.models.Task", f"{_ORIGINAL}.Task"),
            description="One task of the board",
        ),
        MessageTypeSpec(
            name="PlanManagerState",
            message_class=PlanManagerState,
            aliases=(f"{_ORIGINAL}.models.PlanManagerState",),
            description="The board as #PlanningTool saves it",
        ),
    ]
