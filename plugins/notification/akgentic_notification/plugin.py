"""Hook implementations of the notification plugin: the card and its stored types."""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import ConsolePaneSpec, ToolCardSpec, hookimpl
from akgentic_notification.card import NotificationTool
from akgentic_notification.pane import render_notifications_pane


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register the ``notification`` card and the ``akgentic.tool.notification`` path."""
    return [
        ToolCardSpec(
            name="notification",
            card=NotificationTool,
            description="Reminders an agent schedules for itself, delivered after a delay.",
            import_paths=("akgentic.tool.notification",),
        )
    ]


@hookimpl
def akgentic_console_panes() -> Iterable[ConsolePaneSpec]:
    """The ``notification`` card's pane of the web console."""
    return [
        ConsolePaneSpec(
            name="notification",
            card="notification",
            title="Pending notifications",
            render=render_notifications_pane,
        )
    ]
