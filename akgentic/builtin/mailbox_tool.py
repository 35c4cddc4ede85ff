"""The ``mailbox`` built-in plugin: registers MailboxTool as the ``mailbox`` card.

Every BaseAgent carries MailboxTool (the ``read_mailbox`` signal and ``/stop``); it is
registered like any plugin and can be disabled by name (``mailbox``).
"""

from __future__ import annotations

from collections.abc import Iterable

from akgentic.plugins import ToolCardSpec, hookimpl


@hookimpl
def akgentic_tool_cards() -> Iterable[ToolCardSpec]:
    """Register :class:`~akgentic.tool.mailbox.MailboxTool` as ``mailbox``."""
    from akgentic.tool.mailbox import MailboxTool

    return [
        ToolCardSpec(
            name="mailbox",
            card=MailboxTool,
            description="Absorb a queued message into the current run; /stop a run in flight",
        )
    ]
