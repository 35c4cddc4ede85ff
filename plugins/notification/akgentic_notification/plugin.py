"""Hook implementations of the notification plugin: the card and its stored types.

A team using the card cannot be forked (``akgentic_team_fork``): the pending
reminders live in the ``#NotificationTool`` actor's latest state, published once
per scan, not as events, so their state at an earlier point of the log is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugin_api import (
    ConsolePaneSpec,
    ForkRefusedError,
    ForkRequest,
    ToolCardSpec,
    hookimpl,
)
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


@hookimpl
def akgentic_team_fork(fork: ForkRequest) -> None:
    """Refuse a fork of a team that uses the card (its reminders are not kept per event)."""
    if fork.mentions("akgentic_notification."):
        raise ForkRefusedError(
            "notification",
            "keeps its pending reminders in its actor's latest state, not in the event log, "
            "so they cannot be restored as they were at an earlier event",
        )
