"""Events a tool layer publishes, and the command-discovery records they carry.

These classes are written into stored event logs under their class path, so they stay
importable from this module.
"""

from __future__ import annotations

import threading

from akgentic.core.actor_address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.core.utils.serializer import SerializableBaseModel
from akgentic.tool.commands.models import CommandArg, CommandDescriptor

__all__ = [
    "CommandArg",
    "CommandDescriptor",
    "CommandsAnnouncedEvent",
    "ToolStateEvent",
    "ToolStateSequence",
]


class ToolStateEvent(Message):
    """A change to a tool actor's state, broadcast as a delta.

    Clients follow a tool's state by applying these in ``seq`` order; a late joiner
    replays the team history like everything else, so there is no snapshot request.

    Attributes:
        tool_id: Name of the emitting tool actor (``#``-prefixed like the actor).
        seq: Per-tool counter starting at 1, advanced only when an event is emitted,
            so a gap means a missed event.
        payload: The delta: any serializable model. Its own class travels in its
            ``__model__`` tag, so consumers discriminate on the payload object.
    """

    tool_id: str
    seq: int
    payload: SerializableBaseModel


class ToolStateSequence:
    """Numbers one tool's state events without gaps (thread-safe).

    Call :meth:`next_event` only once you know the delta is worth sending; an empty
    change emits nothing and must not consume a number.

    Example::

        if delta.has_changes():
            self.notify_event(self._events.next_event(delta))
    """

    def __init__(self, tool_id: str, last_seq: int = 0) -> None:
        self.tool_id = tool_id
        self._last = last_seq
        self._lock = threading.Lock()

    @property
    def last_seq(self) -> int:
        """Number of the last event built (0 before the first)."""
        return self._last

    def next_event(self, payload: SerializableBaseModel) -> ToolStateEvent:
        """Build the next event of this tool, advancing the counter by one."""
        with self._lock:
            self._last += 1
            return ToolStateEvent(tool_id=self.tool_id, seq=self._last, payload=payload)


class CommandsAnnouncedEvent(Message):
    """The slash commands an agent accepts, published once when its registry is built.

    Attributes:
        agent: The agent the commands belong to.
        commands: One descriptor per command, in registration order.
    """

    agent: ActorAddress
    commands: list[CommandDescriptor]
