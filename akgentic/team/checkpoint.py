"""Checkpoints: a resume that reads the latest checkpoint and the events after it.

A restore needs much less than the whole log. It needs the ``StartMessage`` of
every actor still alive (and the ``StopMessage`` of those that left, so a later
start under their id is not taken for a live one), each live agent's own
``EventMessage`` history (its LLM conversation, tool state events), and the
team budget's events. Telemetry (sent, received, processed...) and the
history of members that were fired play no part. :class:`CheckpointFold`
keeps exactly that subset of a log prefix, in log order: restoring from the
kept events followed by the rest of the log gives the same team as restoring
from the whole log. A ``LlmContextClearedEvent`` also drops the cleared
conversation's messages before it, since replaying them ends in the same
empty conversation, and a ``LlmContextCompactedEvent`` replaces the agent's
kept conversation by the messages the compaction leaves
(:mod:`akgentic.team.checkpoint_llm`), so what is kept follows the agent's live
context, not the length of its log.

Every :data:`CHECKPOINT_EVERY` events a running team's
:class:`~akgentic.team.subscribers.PersistenceSubscriber` writes the fold as a
:class:`~akgentic.team.messages.TeamCheckpoint` event, numbered right after the
last event it covers and written in the same stream, so a checkpoint is durable
exactly when the events before it are, and a process killed while writing one
loses nothing acknowledged (the store's batch is atomic). The checkpoint is a
pure function of the events before it: :func:`fold_log` rebuilds it from any
log, which is what the tests compare.

The fold also keeps the ids of the messages sent into the team under a
caller-chosen, name-based id (UUID version 5: an idempotency key's, see
:mod:`akgentic.cluster.keys`) with their first sequence, so a host that takes
a team over learns which keys its log delivered from the checkpoint and the
tail (:attr:`CheckpointFold.inbound`) instead of decoding the whole log.

:func:`load_restore_point` reads the log backwards, a page at a time, until it
meets a checkpoint it can use: one made for this team (a fork copies its
parent's checkpoints, rewritten, and leaves them unused) whose checksum holds.
A checkpoint that fails its checksum is skipped with a warning in favour of an
older one, and with none the whole log is replayed. Since the fold follows the
log, a fork or rewind at event ``N`` only ever sees checkpoints taken at or
before ``N``.
"""

from __future__ import annotations

import gc
import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from uuid import UUID

from akgentic.core.messages.message import Message
from akgentic.core.messages.orchestrator import (
    EventMessage,
    SentMessage,
    StartMessage,
    StopMessage,
)
from akgentic.core.messages.types import TeamStoppingEvent
from akgentic.core.utils.serializer import shared_addresses
from akgentic.team.messages import TeamCheckpoint
from akgentic.team.models import PersistedEvent, is_inbound_id
from akgentic.team.store import EventStore, load_events_page
from akgentic.team.stores.codec import decode_event, encode_event, loads

__all__ = [
    "CHECKPOINT_EVERY",
    "CheckpointFold",
    "Checkpointer",
    "RestorePoint",
    "checkpoint_of",
    "fold_log",
    "load_restore_point",
    "restore_messages",
    "verify",
    "write_checkpoint",
]

logger = logging.getLogger(__name__)

#: Events between two checkpoints of a running team (a manager setting overrides it).
CHECKPOINT_EVERY = 1000
#: The format written now: 2 adds ``inbound`` (version 1 checkpoints are still read).
CHECKPOINT_VERSION = 2
#: Events of the first page read while looking backwards for a checkpoint; each
#: further page is twice as long, up to :data:`MAX_PAGE`, so what is read beyond the
#: tail stays within about the tail's length.
PAGE = 256
MAX_PAGE = 8192


@cache
def _budget_types() -> tuple[type, ...]:
    from akgentic.llm.budget_events import (
        BudgetChanged,
        BudgetCharged,
        BudgetExhausted,
        BudgetStopped,
        BudgetWarned,
    )

    return (BudgetCharged, BudgetWarned, BudgetExhausted, BudgetChanged, BudgetStopped)


@cache
def _llm_types() -> tuple[type, type, tuple[type, ...]]:
    """The clear and compaction events, and the events whose effect a clear wipes out."""
    from akgentic.llm.events import (
        LlmContextClearedEvent,
        LlmContextCompactedEvent,
        LlmMessageEvent,
        LlmMessageWithheldEvent,
        LlmSystemPromptEvent,
    )

    return (
        LlmContextClearedEvent,
        LlmContextCompactedEvent,
        (LlmMessageEvent, LlmContextCompactedEvent, LlmMessageWithheldEvent, LlmSystemPromptEvent),
    )


_TELEMETRY, _CHECKPOINT, _START, _STOP, _EVENT, _SENT = 1, 2, 3, 4, 5, 6
#: What the fold does with each message class (filled as classes are met).
_KINDS: dict[type, int] = {}


def _kind_of(cls: type) -> int:
    kind = (
        _CHECKPOINT
        if issubclass(cls, TeamCheckpoint)
        else _START
        if issubclass(cls, StartMessage)
        else _STOP
        if issubclass(cls, StopMessage)
        else _EVENT
        if issubclass(cls, EventMessage)
        else _SENT
        if issubclass(cls, SentMessage)
        else _TELEMETRY
    )
    _KINDS[cls] = kind
    return kind


class CheckpointFold:
    """The events of a log prefix that a restore needs, kept in log order (see the module doc)."""

    def __init__(self) -> None:
        self._kept: dict[int, PersistedEvent] = {}
        # Each kept event's stored text, made once: a checkpoint re-joins them.
        self._texts: dict[int, str] = {}
        # Each agent's kept sequences, ascending (some may have been dropped since).
        self._by_agent: dict[UUID, list[int]] = {}
        # Per agent, the conversation events its last compaction kept, and the length
        # of its ``_by_agent`` list then.
        self._conversations: dict[UUID, tuple[list[int], int]] = {}
        self._stopped: set[UUID] = set()
        self._started: set[UUID] = set()
        #: The sequence of the last event folded in (checkpoints included).
        self.upto = 0
        #: Events folded in since the last checkpoint (checkpoints not counted).
        self.since = 0
        #: Name-based (version 5) ids of messages sent into the team -> first sequence.
        self.inbound: dict[UUID, int] = {}
        #: Whether :attr:`inbound` covers the whole log (False after a version 1 checkpoint).
        self.inbound_complete = True
        self._inbound_text: list[str] = []

    @property
    def kept(self) -> list[PersistedEvent]:
        """The kept events, by ascending sequence."""
        return list(self._kept.values())

    def add(self, event: PersistedEvent) -> None:
        """Fold in the next event of the log (a checkpoint only resets :attr:`since`)."""
        self.upto = event.sequence
        message = event.event
        cls = type(message)
        kind = _KINDS.get(cls) or _kind_of(cls)
        if kind == _TELEMETRY:  # most of a log: one lookup, nothing kept
            self.since += 1
            return
        if kind == _SENT:
            self.since += 1
            sent_id = message.message.id  # type: ignore[attr-defined]
            if is_inbound_id(sent_id) and sent_id not in self.inbound:
                self.inbound[sent_id] = event.sequence
                self._inbound_text.append(f"{sent_id.hex}:{event.sequence}")
            return
        if kind == _CHECKPOINT:
            self.since = 0
            return
        self.since += 1
        sender = message.sender.agent_id if message.sender is not None else None
        if kind == _START:
            if sender is not None and sender not in self._stopped and sender not in self._started:
                self._started.add(sender)
                self._keep(event, sender)
        elif kind == _STOP:
            if sender is not None:
                self._stopped.add(sender)
                self._started.discard(sender)
                self._conversations.pop(sender, None)
                for sequence in self._by_agent.pop(sender, ()):
                    if self._kept.pop(sequence, None) is not None:
                        self._texts.pop(sequence, None)
                self._keep(event, None)  # so a later start under this id stays dead
        else:
            assert isinstance(message, EventMessage)
            self._add_event(event, message, sender)

    def _add_event(self, event: PersistedEvent, message: EventMessage, sender: UUID | None) -> None:
        payload = message.event
        if isinstance(payload, _budget_types()):
            self._keep(event, None)  # the budget counts every member's spend, fired or not
        elif isinstance(payload, TeamStoppingEvent):
            return  # a restore never replays it
        elif sender is None:
            self._keep(event, None)
        elif sender not in self._stopped:
            cleared, compacted, wiped = _llm_types()
            if isinstance(payload, cleared):
                self._drop_own(sender, wiped)
            elif isinstance(payload, compacted) and self._compact(event, sender):
                return
            self._keep(event, sender)

    def _compact(self, event: PersistedEvent, agent_id: UUID) -> bool:
        """Shrink the agent's kept conversation to what ``event`` leaves; False: keep it as is."""
        # Imported here: it loads pydantic-ai, which a team without LLM agents never needs.
        from akgentic.team.checkpoint_llm import compact_own

        own = self._by_agent.setdefault(agent_id, [])
        # Only the conversation events the last compaction kept and what came since are
        # read: a long-lived agent's usage events would make each compaction slower.
        conversation, start = self._conversations.get(agent_id, ((), 0))
        kept = compact_own(self._kept, self._texts, [*conversation, *own[start:]], event)
        if kept is None:
            return False
        if kept and kept[-1] == event.sequence:
            own.append(event.sequence)
        # ``own`` keeps the sequences dropped here: rebuilding it would cost as much as reading it.
        self._conversations[agent_id] = (kept, len(own))
        return True

    def _keep(self, event: PersistedEvent, owner: UUID | None) -> None:
        self._kept[event.sequence] = event
        if owner is not None:
            self._by_agent.setdefault(owner, []).append(event.sequence)

    def _drop_own(self, agent_id: UUID, kinds: tuple[type, ...]) -> None:
        own = self._by_agent.get(agent_id, [])
        self._conversations.pop(agent_id, None)  # its positions in ``own`` change
        remaining: list[int] = []
        for sequence in own:
            stored = self._kept.get(sequence)
            if stored is None:
                continue
            message = stored.event
            if isinstance(message, EventMessage) and isinstance(message.event, kinds):
                del self._kept[sequence]
                self._texts.pop(sequence, None)
            else:
                remaining.append(sequence)
        self._by_agent[agent_id] = remaining

    def seed_inbound(self, checkpoint: TeamCheckpoint) -> None:
        """Start :attr:`inbound` from what ``checkpoint`` says (a restore from it)."""
        if checkpoint.version < 2:
            self.inbound_complete = False
            return
        for item in checkpoint.inbound.split(",") if checkpoint.inbound else ():
            hex_id, _, sequence = item.partition(":")
            sent_id = UUID(hex=hex_id)
            if sent_id not in self.inbound:
                self.inbound[sent_id] = int(sequence)
                self._inbound_text.append(item)

    def extend(self, events: Iterable[PersistedEvent]) -> CheckpointFold:
        """Fold in each of ``events``, in order; returns ``self``."""
        for event in events:
            self.add(event)
        return self

    def checkpoint(self, team_id: UUID) -> TeamCheckpoint:
        """The checkpoint of everything folded in so far."""
        texts = self._texts
        parts: list[str] = []
        for sequence, event in self._kept.items():
            text = texts.get(sequence)
            if text is None:
                text = texts[sequence] = encode_event(event)
            parts.append(text)
        payload = "[" + ",".join(parts) + "]"
        # Ids learnt only from a tail after a version 1 checkpoint are not all of them:
        # such a checkpoint stays version 1 (its readers go back to the whole log).
        complete = self.inbound_complete
        inbound = ",".join(self._inbound_text) if complete else ""
        return TeamCheckpoint(
            upto=self.upto,
            owner=team_id.hex,
            count=len(parts),
            payload=payload,
            checksum=_digest(payload, inbound),
            version=CHECKPOINT_VERSION if complete else 1,
            inbound=inbound,
            team_id=team_id,
        )


def _digest(payload: str, inbound: str = "") -> str:
    text = payload if not inbound else f"{payload}\n{inbound}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fold_log(events: Iterable[PersistedEvent]) -> CheckpointFold:
    """The fold of a whole log (or of a prefix of one)."""
    return CheckpointFold().extend(events)


def verify(checkpoint: TeamCheckpoint, team_id: UUID) -> str | None:
    """Why ``checkpoint`` cannot serve a restore of ``team_id`` (``None``: it can)."""
    if checkpoint.owner != team_id.hex:
        return "it was copied from another team (by a fork)"
    if checkpoint.version not in (1, CHECKPOINT_VERSION):
        return f"its format version {checkpoint.version} is unknown"
    if _digest(checkpoint.payload, checkpoint.inbound) != checkpoint.checksum:
        return "its checksum does not match its contents"
    return None


def checkpoint_of(checkpoint: TeamCheckpoint, team_id: UUID) -> list[PersistedEvent]:
    """The kept events a verified checkpoint holds (``EventLogUnreadableError`` if undecodable)."""
    rows = loads(checkpoint.payload)
    return [decode_event(row, team_id, int(row.get("sequence", 0))) for row in rows]


@dataclass
class RestorePoint:
    """What a restore replays: the kept events of a checkpoint, then the log after it.

    ``events`` holds no checkpoint. ``checkpoint`` is the sequence of the
    checkpoint used (``None``: the whole log was read), ``fold`` the fold of
    the whole log, ready to go on with the events a resumed team writes, and
    ``read`` how many events were read from the store.
    """

    events: list[PersistedEvent]
    fold: CheckpointFold
    checkpoint: int | None = None
    read: int = 0
    skipped: list[str] = field(default_factory=list)


def load_restore_point(
    store: EventStore, team_id: UUID, *, use_checkpoints: bool = True, page_size: int = PAGE
) -> RestorePoint:
    """The events a restore of ``team_id`` needs, from its newest usable checkpoint.

    Reads the log backwards, in pages of ``page_size`` events and then twice as
    many each time, until a usable checkpoint turns up (see the module
    docstring); without one, or with ``use_checkpoints=False``, the whole log.
    A store with ``scan_raw_events`` (every :class:`~akgentic.team.stores.StoreBase`)
    is read undecoded, so only the checkpoint and the events after it are decoded.
    """
    # Decoding allocates many objects and frees none: the cyclic collector would
    # re-walk the growing survivors on each pass (see TeamRestorer.restore).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(store, team_id, use_checkpoints, page_size)
    finally:
        if collecting:
            gc.enable()


def _load(store: EventStore, team_id: UUID, use_checkpoints: bool, page_size: int) -> RestorePoint:
    with shared_addresses():  # one proxy per distinct address, as a whole-log load gives
        if not use_checkpoints:
            events = store.load_events(team_id)
            return _full(events, len(events), [])
        scan = getattr(store, "scan_raw_events", None)
        if callable(scan):
            return _from_raw(store, scan, team_id, page_size)
        return _from_pages(store, team_id, page_size)


def _from_pages(store: EventStore, team_id: UUID, page_size: int) -> RestorePoint:
    pages: list[list[PersistedEvent]] = []
    before: int | None = None
    skipped: list[str] = []
    read = 0
    while True:
        page = load_events_page(
            store, team_id, before_sequence=before, limit=page_size, newest=True
        )
        if not page:
            break
        read += len(page)
        pages.append(page)
        for index in range(len(page) - 1, -1, -1):
            kept = _usable(page[index], team_id, skipped)
            if kept is not None:
                newer = [e for p in reversed(pages[:-1]) for e in p]
                return _point(kept, page[index], [*page[index + 1 :], *newer], read, skipped)
        before = page[0].sequence
        if before <= 1:
            break
        page_size = min(page_size * 2, MAX_PAGE)
    return _full([e for p in reversed(pages) for e in p], read, skipped)


_CHECKPOINT_PATH = "akgentic.team.messages.TeamCheckpoint"


def _from_raw(
    store: EventStore, scan: Callable[..., list[tuple[int, Any]]], team_id: UUID, page_size: int
) -> RestorePoint:
    newer: list[tuple[int, Any]] = []  # rows after the current window, ascending
    skipped: list[str] = []
    high = store.get_max_sequence(team_id)
    read = 0
    while high > 0:
        low = max(0, high - page_size)
        window = scan(team_id, after_sequence=low, before_sequence=high + 1)
        read += len(window)
        for index in range(len(window) - 1, -1, -1):
            sequence, payload = window[index]
            if not _looks_like_checkpoint(payload):
                continue
            event = decode_event(payload, team_id, sequence)
            kept = _usable(event, team_id, skipped)
            if kept is not None:
                rows = [*window[index + 1 :], *newer]
                tail = [decode_event(p, team_id, n) for n, p in rows]
                return _point(kept, event, tail, read, skipped)
        newer = [*window, *newer]
        high = low
        page_size = min(page_size * 2, MAX_PAGE)
    return _full([decode_event(p, team_id, n) for n, p in newer], read, skipped)


def _looks_like_checkpoint(payload: Any) -> bool:
    """Whether a stored row may hold a checkpoint (decoding tells for sure)."""
    if isinstance(payload, str):
        return _CHECKPOINT_PATH in payload
    if isinstance(payload, dict):
        event = payload.get("event")
        return isinstance(event, dict) and event.get("__model__") == _CHECKPOINT_PATH
    return True


def _point(
    kept: list[PersistedEvent],
    stored: PersistedEvent,
    newer: list[PersistedEvent],
    read: int,
    skipped: list[str],
) -> RestorePoint:
    tail = [e for e in newer if not isinstance(e.event, TeamCheckpoint)]
    fold = CheckpointFold().extend(kept)
    assert isinstance(stored.event, TeamCheckpoint)
    fold.seed_inbound(stored.event)
    fold.upto, fold.since = stored.sequence, 0
    fold.extend(tail)
    return RestorePoint([*kept, *tail], fold, stored.sequence, read, skipped)


def _full(events: list[PersistedEvent], read: int, skipped: list[str]) -> RestorePoint:
    fold = fold_log(events)
    fold.since = sum(1 for e in events if not isinstance(e.event, TeamCheckpoint))
    replay = [e for e in events if not isinstance(e.event, TeamCheckpoint)]
    return RestorePoint(replay, fold, None, read, skipped)


def _usable(
    stored: PersistedEvent, team_id: UUID, skipped: list[str]
) -> list[PersistedEvent] | None:
    """The kept events of ``stored`` when it is a checkpoint a restore can use."""
    message = stored.event
    if not isinstance(message, TeamCheckpoint):
        return None
    reason = verify(message, team_id)
    if reason is None:
        try:
            return checkpoint_of(message, team_id)
        except Exception as exc:  # decodable outside, not inside: as bad as a checksum
            reason = f"its contents cannot be decoded ({exc})"
    sequence = stored.sequence
    skipped.append(f"{sequence}: {reason}")
    if message.owner == team_id.hex:
        logger.warning(
            "team %s: checkpoint at event %d skipped, %s; using an older one or the whole log",
            team_id,
            sequence,
            reason,
        )
    else:
        logger.debug("team %s: checkpoint at event %d skipped, %s", team_id, sequence, reason)
    return None


class Checkpointer:
    """Decides, event by event, when a running team writes its next checkpoint.

    The :class:`~akgentic.team.subscribers.PersistenceSubscriber` it is given to
    calls :meth:`observe` with each event it numbers (under its lock), and
    writes the checkpoint returned right after that event.
    """

    def __init__(self, team_id: UUID, fold: CheckpointFold | None = None, every: int = 0) -> None:
        if every < 0:
            raise ValueError(f"every must be >= 0 (0: only on request), not {every}")
        self.team_id = team_id
        self.fold = fold if fold is not None else CheckpointFold()
        self.every = every
        #: Checkpoints this checkpointer made.
        self.written = 0

    @property
    def due(self) -> bool:
        """Whether :attr:`every` events (or more) went by since the last checkpoint."""
        return self.every > 0 and self.fold.since >= self.every

    def observe(self, event: PersistedEvent) -> TeamCheckpoint | None:
        """Fold ``event`` in; the checkpoint to write after it when one is due."""
        fold = self.fold
        fold.add(event)
        every = self.every
        if every <= 0 or fold.since < every:  # (a checkpoint itself leaves ``since`` at 0)
            return None
        return self.make()

    def make(self) -> TeamCheckpoint | None:
        """The checkpoint of everything observed (``None`` when nothing came since the last)."""
        fold = self.fold
        if fold.since == 0:
            return None
        self.written += 1
        checkpoint = fold.checkpoint(self.team_id)
        fold.since = 0  # counted from here, whether or not the caller observes the checkpoint
        return checkpoint


def write_checkpoint(store: EventStore, team_id: UUID, *, epoch: int | None = None) -> int | None:
    """Append a checkpoint to the log of a team that is not running; returns its sequence.

    For an owner about to passivate or hand over a team it holds (pass the
    claim's ``epoch``): nobody else may append meanwhile. ``None`` when the
    log already ends with a checkpoint, or is empty.
    """
    point = load_restore_point(store, team_id)
    fold = point.fold
    if fold.since == 0 or fold.upto == 0:
        return None
    message = fold.checkpoint(team_id)
    sequence = fold.upto + 1
    store.save_event(PersistedEvent(team_id=team_id, sequence=sequence, event=message), epoch=epoch)
    return sequence


def restore_messages(events: Iterable[PersistedEvent]) -> list[Message]:
    """The messages of ``events``, checkpoints left out (what a restore replays)."""
    return [e.event for e in events if not isinstance(e.event, TeamCheckpoint)]
