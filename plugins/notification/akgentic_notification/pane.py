"""The notification card's pane in the web console: the reminders still pending."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.plugin_api import PaneSource

__all__ = ["render_notifications_pane"]


def render_notifications_pane(source: PaneSource) -> list[dict[str, Any]]:
    """Pending reminders, soonest first, from the notification actor's latest stored state."""
    from akgentic_notification.models import NotificationState

    pending = [
        entry
        for snapshot in source.states
        if isinstance(snapshot.state, NotificationState)
        for entry in snapshot.state.pending.values()
    ]
    if not pending:
        return [{"kind": "text", "text": "No pending notification."}]
    pending.sort(key=lambda entry: entry.fire_at)
    rows = [
        [str(e.notification_id), e.owner.name, e.fire_at.isoformat(), e.content] for e in pending
    ]
    return [{"kind": "table", "columns": ["id", "for", "due", "text"], "rows": rows}]
