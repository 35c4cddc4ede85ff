"""From a team's stored events to the AG-UI events of one run: a pure function of the log.

A run starts at its **anchor**, the stored ``SentMessage`` that carries the run's
input into the team: the message the run sent (its id is derived from the team,
the thread id and the run id, see :func:`run_message_id`) or the human's answer
to a question the run resumes. From there, :class:`RunProjection` reads the
stored events in order and turns each into zero or more AG-UI events, each at a
:class:`Position` ``(sequence, index)``: the event's sequence number in the log
and its rank among the AG-UI events made from it. The run ends at the first
stored event after which every message sent since the anchor has been processed
(the orchestrator's ledger, as :class:`~akgentic.team.subscribers.ActivityMonitor`
keeps it live, replayed from the log).

Nothing here reads a clock, a live actor or a cache: the same log gives the same
events at the same positions, which is what lets a client reconnect with the
last position it saw (``Last-Event-ID``) and get exactly the rest.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID, uuid5

import jsonpatch
from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from akgentic.plugin_api import PaneSource, current_registry, pending_questions, roster

if TYPE_CHECKING:
    from akgentic.plugin_api import Message, PersistedEvent

logger = logging.getLogger(__name__)

__all__ = [
    "LogIndex",
    "Position",
    "RunKey",
    "RunProjection",
    "find_start",
    "run_message_id",
    "team_state",
]

#: Namespace of the ids of the messages runs send (uuid5 of team, thread and run ids).
_NAMESPACE = UUID("5b8f0b5e-8f1e-4c59-9a55-7d4c0e6a9a11")
#: Senders outside the team (plain code): their sends never get a closing ledger entry.
_OUTSIDE_ROLE = "ActorSystem"
#: Digits accepted in each part of a position (a sequence number fits in 19).
_MAX_DIGITS = 19


@dataclass(frozen=True, order=True)
class Position:
    """Where an AG-UI event comes from: a stored event's sequence and a rank within it."""

    seq: int
    index: int

    def __str__(self) -> str:
        return f"{self.seq}.{self.index}"

    @classmethod
    def parse(cls, text: str) -> Position:
        """A position written by ``str``; ``ValueError`` for anything else."""
        seq, dot, index = text.strip().partition(".")
        if not (dot and seq.isdigit() and index.isdigit()):
            raise ValueError(f"not an event id of this stream: {text[:40]!r}")
        if len(seq) > _MAX_DIGITS or len(index) > _MAX_DIGITS:
            raise ValueError(f"not an event id of this stream: {text[:40]!r}")
        return cls(int(seq), int(index))


@dataclass(frozen=True)
class RunKey:
    """What identifies a run in the log: its ids, and what it sent or answered."""

    thread_id: str
    run_id: str
    #: The id of the message the run sends to the team (None when it only answers).
    message_id: str | None = None
    #: The ids of the questions the run answers (its resume entries).
    answers: frozenset[str] = field(default_factory=frozenset)


def run_message_id(team_id: UUID, thread_id: str, run_id: str) -> UUID:
    """The id of the message a run sends: the same run always sends the same message."""
    return uuid5(_NAMESPACE, f"{team_id}\x00{thread_id}\x00{run_id}")


_kinds: dict[type, frozenset[str]] = {}


def _is(value: object, name: str) -> bool:
    """Whether ``value``'s class, or one it derives from, is called ``name``."""
    cls = type(value)
    names = _kinds.get(cls)
    if names is None:
        names = _kinds[cls] = frozenset(c.__name__ for c in cls.__mro__)
    return name in names


def _name(address: Any) -> str:
    return str(getattr(address, "name", "") or "")


def _is_input(message: Any, key: RunKey) -> bool:
    """Whether a ``SentMessage`` carries the run's own input (what the client sent)."""
    inner = message.message
    if key.message_id is not None and str(inner.id) == key.message_id:
        return True
    sender = message.sender
    return (
        sender is not None
        and bool(sender.is_user_proxy)
        and inner.parent_id is not None
        and str(inner.parent_id) in key.answers
    )


def find_start(events: Sequence[PersistedEvent], key: RunKey, after: int = 0) -> int | None:
    """The sequence of the run's anchor among ``events`` numbered after ``after``, or None."""
    for stored in events:
        if stored.sequence <= after:
            continue
        message = stored.event
        if _is(message, "SentMessage") and _is_input(message, key):
            return stored.sequence
    return None


#: Stored messages a run's state is made from (what ``team_state`` reads).
_STATE_KINDS = ("StartMessage", "StopMessage", "EventMessage")


class LogIndex:
    """What runs look up in one team's log, kept up to date by indexing only new events.

    A pure function of the log prefix it has seen: where each run's anchor is
    (by message id, and by the question a human's answer replies to), and the
    few stored messages the state and the open questions are made from, so a
    run's snapshot, deltas and outcome cost no pass over the whole log.
    """

    def __init__(self) -> None:
        self._reset([])

    def _reset(self, events: list[PersistedEvent]) -> None:
        #: The newest log indexed (a prefix of it when others were read since).
        self.events = events
        self.count = 0
        self._anchors: dict[str, int] = {}
        self._answers: dict[str, int] = {}
        self._state_seqs: list[int] = []
        self._state: list[Any] = []
        self._question_seqs: list[int] = []
        self._questions: list[tuple[int, Any]] = []

    def update(self, events: list[PersistedEvent]) -> list[PersistedEvent]:
        """Index the events after the ones seen; the newest log known, ``events`` or later.

        Reads of one team's log may finish out of order: an older copy (a prefix
        of the same decoded events) changes nothing; another log altogether (the
        team deleted and created again) is indexed from scratch.
        """
        count = self.count
        known = self.events
        if len(events) <= count:
            if not events or events[-1] is known[len(events) - 1]:
                return known  # the same log, as far as it was, or less far
            self._reset(events)
            count = 0
        elif count and events[count - 1] is not known[count - 1]:
            self._reset(events)
            count = 0
        for stored in events[count:]:
            message: Any = stored.event
            sequence = stored.sequence
            if _is(message, "SentMessage"):
                inner = message.message
                self._anchors.setdefault(str(inner.id), sequence)
                sender, recipient = message.sender, message.recipient
                from_human = sender is not None and bool(sender.is_user_proxy)
                if from_human and inner.parent_id is not None:
                    self._answers.setdefault(str(inner.parent_id), sequence)
                if from_human or (recipient is not None and bool(recipient.is_user_proxy)):
                    self._question_seqs.append(sequence)
                    self._questions.append((sequence, message))
            elif any(_is(message, kind) for kind in _STATE_KINDS):
                self._state_seqs.append(sequence)
                self._state.append(message)
        self.events = events
        self.count = len(events)
        return events

    def start(self, key: RunKey) -> int | None:
        """The sequence of the run's anchor, or None (as :func:`find_start`)."""
        found = [self._anchors.get(key.message_id)] if key.message_id is not None else []
        found += [self._answers.get(answer) for answer in key.answers]
        known = [sequence for sequence in found if sequence is not None]
        return min(known) if known else None

    def state_messages(self, upto: int) -> list[Any]:
        """The stored messages ``team_state`` reads, numbered up to ``upto``."""
        return self._state[: bisect.bisect_right(self._state_seqs, upto)]

    def conversation(self, upto: int) -> list[tuple[int, Any]]:
        """The messages to or from a human numbered up to ``upto`` (the questions' source)."""
        return self._questions[: bisect.bisect_right(self._question_seqs, upto)]


def _pane_states(messages: Sequence[Message]) -> dict[str, Any]:
    """Each installed console pane's ``state`` over the log, by pane name.

    Read through the plugin registry, so a plugin's data (the planning board) is
    shared without this plugin importing it; a pane that fails is left out, logged.
    """
    team_id = next((m.team_id for m in messages if m.team_id is not None), UUID(int=0))
    source = PaneSource(team_id=team_id, events=messages)
    states: dict[str, Any] = {}
    for name, spec in sorted(current_registry().console_panes().items()):
        if spec.state is None:
            continue
        try:
            states[name] = spec.state(source)
        except Exception:
            logger.exception("the state of console pane %r failed", name)
    return states


def team_state(messages: Sequence[Message]) -> dict[str, Any]:
    """The shared state after ``messages``: the members and, when installed, the board.

    ``members`` are the console's roster rows (name, role, agent id, model, human,
    tokens and cost) without ``busy``, which is live, not stored; the model is the
    one the member's card names. Every console pane with a ``state`` adds its data
    under its name: with the planning plugin, ``planning`` is the board by task id.
    """
    members = [{k: v for k, v in row.items() if k != "busy"} for row in roster(messages, [], {})]
    state: dict[str, Any] = {"members": members}
    for name, value in _pane_states(messages).items():
        state.setdefault(name, value)
    return state


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _part_text(part: Any) -> str:
    for method in ("model_response_str", "model_response"):
        render = getattr(part, method, None)
        if callable(render):
            try:
                return _text(render())
            except Exception:  # a part that cannot render: shown by its content
                break
    return _text(getattr(part, "content", ""))


#: Stored events that can change the state: who runs, what they spent, the board.
_STATE_MESSAGES = ("StartMessage", "StopMessage")
_STATE_EVENTS = ("LlmUsageEvent", "ToolStateEvent")


class RunProjection:
    """The AG-UI events of one run, produced event by event from the stored log.

    Call :meth:`begin` with the log and the index of the anchor, then
    :meth:`feed` with each later index in order, until :attr:`finished`.
    """

    def __init__(
        self,
        key: RunKey,
        state: Callable[[Sequence[Any]], Any] = team_state,
        index: LogIndex | None = None,
    ) -> None:
        self.key = key
        #: The log's index (current up to the events fed), when the caller keeps one.
        self.index = index
        self.finished = False
        self._state_of = state
        self._state: Any = None
        self._open: dict[tuple[str, str], int] = {}
        self._opened = False
        self._seq = 0
        self._index = 0
        self._texts: set[str] = set()
        self._calls: dict[tuple[str, str], str] = {}
        self._returns: dict[tuple[str, str], str] = {}
        self._usage: dict[tuple[str, str], list[int]] = {}

    # -- positions ----------------------------------------------------------
    def _at(self, seq: int) -> Callable[[BaseEvent], tuple[Position, BaseEvent]]:
        if seq != self._seq:
            self._seq, self._index = seq, 0

        def place(event: BaseEvent) -> tuple[Position, BaseEvent]:
            position = Position(seq, self._index)
            self._index += 1
            return position, event

        return place

    def _messages(self, events: Sequence[PersistedEvent], upto: int) -> list[Any]:
        if self.index is not None:
            return self.index.state_messages(events[upto].sequence)
        return [stored.event for stored in events[: upto + 1]]

    # -- the run ----------------------------------------------------------------
    def begin(
        self, events: Sequence[PersistedEvent], index: int
    ) -> list[tuple[Position, BaseEvent]]:
        """RUN_STARTED and the STATE_SNAPSHOT, both at the anchor's sequence, then its events."""
        anchor = events[index]
        place = self._at(anchor.sequence)
        self._state = self._state_of(self._messages(events, index))
        out = [
            place(
                RunStartedEvent(
                    thread_id=self.key.thread_id,
                    run_id=self.key.run_id,
                    protocol_version=PROTOCOL_VERSION,
                )
            ),
            place(StateSnapshotEvent(snapshot=self._state)),
        ]
        return out + self.feed(events, index)

    def feed(
        self, events: Sequence[PersistedEvent], index: int
    ) -> list[tuple[Position, BaseEvent]]:
        """The AG-UI events of the stored event at ``index`` (after the anchor's, in order)."""
        if self.finished:
            return []
        stored = events[index]
        message: Any = stored.event
        place = self._at(stored.sequence)
        out: list[tuple[Position, BaseEvent]] = []
        changes_state = False
        if _is(message, "SentMessage"):
            out += [place(e) for e in self._sent(message)]
            self._ledger_open(message)
        elif _is(message, "ProcessedMessage") or _is(message, "HandledMessage"):
            self._ledger_close(message)
        elif _is(message, "EventMessage"):
            out += [place(e) for e in self._event(message)]
            changes_state = type(message.event).__name__ in _STATE_EVENTS
        else:
            changes_state = any(_is(message, name) for name in _STATE_MESSAGES)
        if changes_state:
            state = self._state_of(self._messages(events, index))
            delta = jsonpatch.make_patch(self._state, state).patch
            if delta:
                out.append(place(StateDeltaEvent(delta=delta)))
            self._state = state
        if self._opened and not self._open:
            self.finished = True
            out.append(place(self._finish(events, index)))
        return out

    # -- the ledger (what ActivityMonitor keeps live) ----------------------------
    def _ledger_open(self, message: Any) -> None:
        sender, recipient = message.sender, message.recipient
        if sender is None or recipient is None:
            return
        if sender.role == _OUTSIDE_ROLE or recipient.role == _OUTSIDE_ROLE:
            return
        key = (str(message.message.id), str(recipient.agent_id))
        self._open[key] = self._open.get(key, 0) + 1
        self._opened = True

    def _ledger_close(self, message: Any) -> None:
        sender = message.sender
        if sender is None:
            return
        key = (str(message.message_id), str(sender.agent_id))
        count = self._open.get(key)
        if count is None:
            return  # opened before the run: not the run's
        if count <= 1:
            del self._open[key]
        else:
            self._open[key] = count - 1

    # -- messages between the human and the team ---------------------------------
    def _sent(self, message: Any) -> list[BaseEvent]:
        sender, recipient, inner = message.sender, message.recipient, message.message
        if _is_input(message, self.key):
            return []  # the client sent it: not echoed
        from_human = sender is not None and bool(sender.is_user_proxy)
        to_human = recipient is not None and bool(recipient.is_user_proxy)
        if from_human == to_human:
            return []  # between members (or between humans): not a conversation with the human
        message_id = str(inner.id)
        if message_id in self._texts:
            return []  # one message sent to several humans: streamed once
        self._texts.add(message_id)
        intent = getattr(inner, "type", None)
        metadata: dict[str, Any] = {"from": _name(sender), "to": _name(recipient)}
        if isinstance(intent, str):
            metadata["intent"] = intent
        content = _text(getattr(inner, "content", None))
        role = "user" if from_human else "assistant"
        events: list[BaseEvent] = [
            TextMessageStartEvent(
                message_id=message_id, role=role, name=_name(sender), metadata=metadata
            )
        ]
        if content:
            events.append(TextMessageContentEvent(message_id=message_id, delta=content))
        events.append(TextMessageEndEvent(message_id=message_id))
        return events

    # -- tool calls, usage and failures --------------------------------------------
    def _event(self, message: Any) -> list[BaseEvent]:
        event = message.event
        kind = type(event).__name__
        agent = _name(message.sender)
        if kind == "ToolCallEvent":
            call_id = f"{event.run_id}:{event.tool_call_id}"
            self._calls[(event.run_id, event.tool_call_id)] = call_id
            return [
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=event.tool_name, metadata={"agent": agent}
                ),
                ToolCallArgsEvent(tool_call_id=call_id, delta=_text(event.arguments)),
                ToolCallEndEvent(tool_call_id=call_id),
            ]
        if kind == "LlmMessageEvent":
            for part in getattr(event.message, "parts", ()):
                call = getattr(part, "tool_call_id", None)
                if call and getattr(part, "part_kind", "") in ("tool-return", "retry-prompt"):
                    self._returns[(agent, str(call))] = _part_text(part)
            return []
        if kind == "ToolReturnEvent":
            started = (str(event.run_id), str(event.tool_call_id))
            if started not in self._calls:
                return []  # started before the run
            call_id = self._calls.pop(started)
            content = self._returns.pop((agent, event.tool_call_id), "")
            metadata = {"agent": agent, "success": bool(event.success)}
            return [
                ToolCallResultEvent(
                    message_id=f"{call_id}:result",
                    tool_call_id=call_id,
                    content=content,
                    role="tool",
                    metadata=metadata,
                )
            ]
        if kind == "LlmUsageEvent":
            totals = self._usage.setdefault((event.provider_name, event.model_name), [0, 0])
            totals[0] += int(event.input_tokens)
            totals[1] += int(event.output_tokens)
            return []
        if kind == "TurnFailed":
            value = {"agent": agent, "cause": _text(event.cause), "kind": _text(event.kind)}
            return [CustomEvent(name="akgentic.turn_failed", value=value)]
        return []

    def _finish(self, events: Sequence[PersistedEvent], index: int) -> RunFinishedEvent:
        """RUN_FINISHED: an interrupt outcome while questions to the human are open."""
        if self.index is not None:
            asked = pending_questions(self.index.conversation(events[index].sequence))
        else:
            asked = pending_questions([(e.sequence, e.event) for e in events[: index + 1]])
        usage = [
            TokenUsage(
                provider=provider,
                model=model,
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                total_tokens=tokens[0] + tokens[1],
            )
            for (provider, model), tokens in sorted(self._usage.items())
        ]
        outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
        if asked:
            outcome = RunFinishedInterruptOutcome(
                interrupts=[
                    Interrupt(
                        id=question["id"],
                        reason="question",
                        message=question["content"],
                        response_schema={"type": "string"},
                        metadata={"from": question["from"], "to": question["to"]},
                    )
                    for question in asked
                ]
            )
        else:
            outcome = RunFinishedSuccessOutcome()
        return RunFinishedEvent(
            thread_id=self.key.thread_id,
            run_id=self.key.run_id,
            outcome=outcome,
            usage=usage or None,
        )
