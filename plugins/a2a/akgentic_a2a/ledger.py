"""The A2A tasks of a team, folded from its event log.

A task starts with an :class:`~akgentic_a2a.messages.A2ATurn` recorded as sent; every
message whose ``parent_id`` leads back to it belongs to the task. Messages that members
send to the human (a user proxy) are what the A2A client sees: a ``request`` is a
question (state ``input-required``), anything else a reply (an artifact; state
``completed``). A message from the human inside the task is an answer (state
``working`` again). A ``TurnFailed`` event of the task before any reply fails it.

The fold is deterministic: the same log gives the same tasks, which is what makes
``tasks/get`` answer the same after a restart.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import Task, TaskState

__all__ = ["Entry", "Ledger", "Turn", "state_value"]

#: States a task's log can put it in (their A2A names).
SUBMITTED = "submitted"
WORKING = "working"
INPUT_REQUIRED = "input-required"
COMPLETED = "completed"
FAILED = "failed"
#: States where the task waits for nobody in the team.
SETTLED = frozenset({INPUT_REQUIRED, COMPLETED, FAILED})


@dataclass(frozen=True)
class Entry:
    """One message of a task's conversation as the A2A client sees it."""

    id: str
    role: str  # "user" or "agent"
    kind: str  # "request", "answer", "question", "reply" or "failure"
    text: str
    sender: str | None
    timestamp: datetime | None


@dataclass
class Turn:
    """One A2A task: a turn of the team's conversation."""

    task_id: str
    context_id: str
    root_id: str
    sequence: int
    entries: list[Entry] = field(default_factory=list)
    state: str = WORKING
    question_id: str | None = None
    updated: datetime | None = None

    @property
    def replies(self) -> list[Entry]:
        """The replies the human got (the task's artifacts), oldest first."""
        return [e for e in self.entries if e.kind == "reply"]

    def to_task(self) -> Task:
        """The task as an A2A ``Task`` (status message = the latest agent message)."""
        from a2a.types.a2a_pb2 import Artifact, Part, Task, TaskStatus

        entries = list(self.entries)
        status = TaskStatus(state=state_value(self.state))
        if self.updated is not None:
            status.timestamp.FromDatetime(self.updated)
        if entries and entries[-1].role == "agent":
            status.message.CopyFrom(self.a2a_message(entries.pop()))
        return Task(
            id=self.task_id,
            context_id=self.context_id,
            status=status,
            history=[self.a2a_message(e) for e in entries],
            artifacts=[
                Artifact(
                    artifact_id=e.id,
                    name="reply",
                    description=f"reply from {e.sender}" if e.sender else "",
                    parts=[Part(text=e.text, media_type="text/plain")],
                )
                for e in self.replies
            ],
        )

    def a2a_message(self, entry: Entry) -> Any:
        """``entry`` as an A2A ``Message`` of this task."""
        from a2a.types.a2a_pb2 import Message, Part, Role

        return Message(
            message_id=entry.id,
            context_id=self.context_id,
            task_id=self.task_id,
            role=Role.ROLE_USER if entry.role == "user" else Role.ROLE_AGENT,
            parts=[Part(text=entry.text, media_type="text/plain")],
        )


def state_value(state: str) -> TaskState:
    """The A2A ``TaskState`` value of a ledger state."""
    return _states()[state]


@functools.cache
def _states() -> dict[str, TaskState]:
    # Built once: each ``TaskState.X`` is a Python-level lookup of protobuf's enum wrapper.
    from a2a.types.a2a_pb2 import TaskState

    return {
        SUBMITTED: TaskState.TASK_STATE_SUBMITTED,
        WORKING: TaskState.TASK_STATE_WORKING,
        INPUT_REQUIRED: TaskState.TASK_STATE_INPUT_REQUIRED,
        COMPLETED: TaskState.TASK_STATE_COMPLETED,
        FAILED: TaskState.TASK_STATE_FAILED,
    }


def _text(message: Any) -> str:
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""


class Ledger:
    """The tasks of one team; :meth:`apply` each event of its log, in order."""

    def __init__(self) -> None:
        self.turns: dict[str, Turn] = {}
        #: akgentic message id -> the task it belongs to.
        self._owner: dict[str, str] = {}
        #: Sequence of the last event applied.
        self.sequence = 0

    def apply(self, sequence: int, event: Any) -> Turn | None:
        """Fold one stored event; returns the task it changed, if any."""
        from akgentic.plugin_api import EventMessage, SentMessage

        self.sequence = max(self.sequence, sequence)
        if isinstance(event, SentMessage):
            return self._sent(sequence, event)
        if isinstance(event, EventMessage) and type(event.event).__name__ == "TurnFailed":
            turn = self._turn_of(event.parent_id)
            if turn is None or turn.state != WORKING:
                return None
            cause = getattr(event.event, "cause", None)
            turn.entries.append(
                Entry(
                    id=str(event.id),
                    role="agent",
                    kind="failure",
                    text=str(cause or "the team's turn failed"),
                    sender=event.sender.name if event.sender is not None else None,
                    timestamp=event.timestamp,
                )
            )
            turn.state = FAILED
            turn.updated = event.timestamp
            return turn
        return None

    def _turn_of(self, message_id: object) -> Turn | None:
        if message_id is None:
            return None
        task_id = self._owner.get(str(message_id))
        return None if task_id is None else self.turns.get(task_id)

    def _sent(self, sequence: int, sent: Any) -> Turn | None:
        from akgentic_a2a.messages import A2ATurn

        inner = sent.message
        inner_id = str(inner.id)
        if inner_id in self._owner:
            return None  # the same message to one more recipient
        if isinstance(inner, A2ATurn):
            if inner.a2a_task_id in self.turns:  # a second start of one task: ignored
                return None
            turn = Turn(
                task_id=inner.a2a_task_id,
                context_id=inner.a2a_context_id,
                root_id=inner_id,
                sequence=sequence,
                updated=inner.timestamp,
            )
            turn.entries.append(
                Entry(
                    id=inner.a2a_message_id or inner_id,
                    role="user",
                    kind="request",
                    text=_text(inner),
                    sender=None,
                    timestamp=inner.timestamp,
                )
            )
            self.turns[turn.task_id] = turn
            self._owner[inner_id] = turn.task_id
            return turn
        owner = self._turn_of(inner.parent_id)
        if owner is None:
            return None
        turn = owner
        self._owner[inner_id] = turn.task_id
        from_human = sent.sender is not None and sent.sender.is_user_proxy
        to_human = sent.recipient is not None and sent.recipient.is_user_proxy
        sender = sent.sender.name if sent.sender is not None else None
        if from_human:
            if turn.question_id is not None and str(inner.parent_id) == turn.question_id:
                turn.question_id = None
                turn.state = WORKING
            turn.entries.append(
                Entry(inner_id, "user", "answer", _text(inner), None, inner.timestamp)
            )
        elif to_human:
            if getattr(inner, "type", None) == "request":
                turn.entries.append(
                    Entry(inner_id, "agent", "question", _text(inner), sender, inner.timestamp)
                )
                turn.question_id = inner_id
                turn.state = INPUT_REQUIRED
            else:
                turn.entries.append(
                    Entry(inner_id, "agent", "reply", _text(inner), sender, inner.timestamp)
                )
                if turn.state != INPUT_REQUIRED:
                    turn.state = COMPLETED
        else:
            return None  # inside the team: part of the task, not shown
        turn.updated = inner.timestamp
        return turn
