"""Forking a team at a sequence of its log, and rewinding a team to one.

A fork is a new team whose log is the parent's events ``1..at_sequence``. The
copy is made by reading the parent (only what the store acknowledged, in pages,
so the parent's writers are never held up for longer than one page's read) and
writing the copy under the new team's id before its record exists: a team
without a record is invisible (``load_team`` gives ``None``, ``list_teams``
skips it; ``akgentic store repair`` removes such an orphan). The record is
written last, which is the one step that makes the fork exist, so a process
killed at any point leaves either no team or a complete one.

Ids inside the copy are rewritten, not shared: the parent's team id becomes the
fork's, and every agent id becomes a new one derived from it
(``uuid5(fork id, agent id)``), so a fork can run next to its parent in one
process without two live actors answering to one id. The rewrite works on the
stored JSON text (:class:`Rewrite`), and needs no class of the log to import.

No side effect is repeated. Resuming a team replays its log into history and
runs nothing again; a tool call that was in flight at ``at_sequence`` (its
``ToolCallPart`` recorded, its return not yet) is closed in the fork's log by a
tool return saying the fork interrupted it, so the agent is told, and the call is
not made again unless the model asks anew.

Agent state snapshots hold an agent's latest state only: one written at or
before the fork point is the state at the fork point and is copied; a later one
is not, and the agent rebuilds what it can from the log (a note in
:attr:`ForkResult.notes` names it).

Durable state that lives outside the log (a workspace tree, say) is carried by
the plugins through the ``akgentic_team_fork`` hook: each returns a
:class:`ForkStep` that copies its state as it was at the fork point (staged,
published just before the record), or raises
:class:`~akgentic.team.errors.ForkRefusedError` naming its card. See
``docs/time-travel.md``.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from uuid import UUID

from akgentic.team.errors import (
    EventLogUnreadableError,
    ForkPointError,
    ForkRefusedError,
    TeamNotFoundError,
    TeamOwnedError,
    TeamStateError,
)
from akgentic.team.metadata import Lineage
from akgentic.team.models import (
    AgentStateSnapshot,
    PersistedEvent,
    Process,
    TeamOwner,
    TeamStatus,
    utc_now,
)
from akgentic.team.store import EventStore, load_events_page
from akgentic.team.stores.codec import (
    compact_dumps,
    decode_event,
    decode_process,
    decode_state,
    encode_event,
    encode_process,
    encode_state,
    loads,
)

if TYPE_CHECKING:
    from akgentic.plugins import PluginRegistry

__all__ = [
    "INTERRUPTED_BY_FORK",
    "ForkRequest",
    "ForkResult",
    "ForkStep",
    "Rewrite",
    "fork_team",
    "rewind_team",
]

logger = logging.getLogger(__name__)

#: What the fork's log answers, in the agent's history, for a call it interrupted.
INTERRUPTED_BY_FORK = (
    "Error: this tool call was interrupted by a fork of the team at event {sequence}: "
    "it was not run again, and its result is unknown. Check its effects before "
    "calling it again."
)
#: Events read (and copied) per page: one page is one read and one write of the store.
PAGE = 2000

Payload = str | dict[str, Any]
Steps = Callable[[str], None]

_AGENT_ID = re.compile(
    r'"agent_id":"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"'
)
_LLM_MESSAGE = "akgentic.llm.events.LlmMessageEvent"


class Rewrite:
    """Replaces old ids (and a plugin's literal strings) in stored JSON text, in one pass.

    ``pairs`` maps each old string to its new one. Team and agent ids are
    UUID strings, which occur nowhere by accident, so a plain replacement is
    exact; a plugin's literal (``"workspace_id":"coding"``) is spelled with
    its JSON punctuation so that it cannot match inside other text.
    """

    def __init__(self, pairs: Mapping[str, str]) -> None:
        self.pairs = dict(pairs)
        keys = sorted(self.pairs, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(k) for k in keys)) if keys else None

    def text(self, text: str) -> str:
        """``text`` with every old string replaced."""
        if self._pattern is None:
            return text
        pairs = self.pairs
        return self._pattern.sub(lambda m: pairs[m.group(0)], text)

    def payload(self, payload: Payload) -> Payload:
        """A stored payload (JSON text or its data) rewritten, in the same form.

        Text is made compact first when a store spelled it otherwise (PostgreSQL's
        ``jsonb`` puts a space after each ``:``), so a literal matches either way.
        """
        if isinstance(payload, str):
            return self.text(compact(payload))
        rewritten: dict[str, Any] = loads(self.text(compact_dumps(payload)))
        return rewritten

    def with_pairs(self, more: Mapping[str, str]) -> Rewrite:
        """A rewrite doing this one's replacements and ``more``."""
        return Rewrite({**self.pairs, **more})


@runtime_checkable
class ForkStep(Protocol):
    """What a plugin does for a fork, besides the log (see ``akgentic_team_fork``).

    ``card`` names the card the step serves (for messages). ``rewrites`` are
    literal replacements the fork's copy of the log and record also gets (a
    named workspace takes a name of its own there). ``prepare`` copies the
    plugin's state as it was at the fork point where nothing sees it yet,
    ``publish`` makes the copy the fork's (just before the fork's record is
    written), ``discard`` removes whatever ``prepare`` or ``publish`` made
    (the fork failed). ``prepare`` may raise ``ForkRefusedError``.
    """

    card: str
    rewrites: Mapping[str, str]

    def prepare(self) -> None:
        """Stage the copy (invisible until :meth:`publish`)."""
        ...

    def publish(self) -> None:
        """Move the staged copy where the fork finds it."""
        ...

    def discard(self) -> None:
        """Remove what :meth:`prepare` or :meth:`publish` made."""
        ...


@dataclass
class ForkRequest:
    """What a plugin's ``akgentic_team_fork`` hook is told about a fork being made.

    ``parent`` is the parent's record, ``child_id`` the fork's id,
    ``at_sequence`` the last event of the parent the fork holds and ``at_time``
    when the parent recorded it. :meth:`mentions` and :meth:`events_mentioning`
    search the parent's events up to the fork point by their stored text,
    without decoding the others. :meth:`new_id` gives the fork's id for one of
    the parent's team or agent ids.
    """

    parent: Process
    child_id: UUID
    at_sequence: int
    at_time: datetime
    rows: list[tuple[int, str]] = field(repr=False, default_factory=list)
    ids: Mapping[str, str] = field(repr=False, default_factory=dict)

    @property
    def parent_id(self) -> UUID:
        """The parent's team id."""
        return self.parent.team_id

    def new_id(self, old: UUID | str) -> str:
        """The fork's id standing for ``old`` (a team or agent id of the parent)."""
        return self.ids.get(str(old), str(old))

    def mentions(self, text: str) -> bool:
        """Whether the parent's record or any event up to the fork point contains ``text``."""
        if text in encode_process(self.parent):
            return True
        return any(text in row for _, row in self.rows)

    def events_mentioning(self, text: str) -> Iterator[PersistedEvent]:
        """The parent's events up to the fork point whose stored text contains ``text``."""
        for sequence, row in self.rows:
            if text in row:
                yield decode_event(row, self.parent.team_id, sequence)


@dataclass
class ForkResult:
    """What :func:`fork_team` made: the new team, what it was cut from, and what it noticed.

    ``events`` counts the fork's log (the parent's ``at_sequence`` events plus
    the returns of ``interrupted`` calls); ``interrupted`` names each tool call
    that was in flight at the fork point (``@Agent: tool (call id)``);
    ``notes`` says what the fork could not carry exactly.
    """

    team_id: UUID
    parent_id: UUID
    at_sequence: int
    events: int
    interrupted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _no_step(_name: str) -> None:
    return None


def compact(text: str) -> str:
    """Stored JSON text in the compact spelling the codec writes (parsed again if it is not)."""
    return compact_dumps(loads(text)) if '": ' in text else text


def _text(payload: Payload) -> str:
    return compact(payload) if isinstance(payload, str) else compact_dumps(payload)


def _raw_page(
    store: EventStore, team_id: UUID, after: int, before: int, page: int
) -> list[tuple[int, str]]:
    """``(sequence, stored text)`` of a window, from the store's raw read when it has one."""
    raw = getattr(store, "scan_raw_events", None)
    if callable(raw):
        rows: Iterable[tuple[int, Payload]] = raw(
            team_id, after_sequence=after, before_sequence=before, limit=page
        )
        return [(sequence, _text(payload)) for sequence, payload in rows]
    events = load_events_page(
        store, team_id, after_sequence=after, before_sequence=before, limit=page
    )
    return [(event.sequence, encode_event(event)) for event in events]


def _read_prefix(
    store: EventStore, team_id: UUID, at_sequence: int, page: int
) -> list[tuple[int, str]]:
    """Events ``1..at_sequence`` as stored, page by page; a gap is ``EventLogUnreadableError``."""
    rows: list[tuple[int, str]] = []
    after = 0
    while after < at_sequence:
        window = _raw_page(store, team_id, after, at_sequence + 1, page)
        if not window:
            break
        for sequence, text in window:
            if sequence != after + 1:
                raise EventLogUnreadableError(
                    f"team {team_id}'s log has a gap: event {after + 1} is missing "
                    f"(the next stored is {sequence}); it cannot be forked at {at_sequence}"
                )
            rows.append((sequence, text))
            after = sequence
    if after != at_sequence:
        raise EventLogUnreadableError(
            f"team {team_id}'s log has a gap: event {after + 1} is missing; "
            f"it cannot be forked at {at_sequence}"
        )
    return rows


def _id_map(parent_id: UUID, child_id: UUID, rows: Sequence[tuple[int, str]]) -> dict[str, str]:
    """The parent's team id and every agent id met, each mapped to the fork's."""
    ids = {str(parent_id): str(child_id)}
    for _, text in rows:
        for agent_id in _AGENT_ID.findall(text):
            if agent_id not in ids:
                ids[agent_id] = str(uuid.uuid5(child_id, agent_id))
    return ids


def _open_calls(
    team_id: UUID, rows: Sequence[tuple[int, str]]
) -> list[tuple[PersistedEvent, list[Any]]]:
    """Per agent whose last model response asked for tools not yet answered: that event
    and the open ``ToolCallPart``s (pydantic-ai's), in log order."""
    by_agent: dict[UUID, list[PersistedEvent]] = {}
    for sequence, text in rows:
        if _LLM_MESSAGE not in text:
            continue
        stored = decode_event(text, team_id, sequence)
        sender = stored.event.sender
        if sender is not None:
            by_agent.setdefault(sender.agent_id, []).append(stored)
    found: list[tuple[PersistedEvent, list[Any]]] = []
    for events in by_agent.values():
        last_response = None
        answered: set[str] = set()
        for stored in events:
            message = getattr(getattr(stored.event, "event", None), "message", None)
            if message is None:
                continue
            if getattr(message, "kind", None) == "response":
                last_response, answered = stored, set()
            else:
                for part in getattr(message, "parts", ()):
                    if getattr(part, "part_kind", None) in ("tool-return", "retry-prompt"):
                        answered.add(str(getattr(part, "tool_call_id", "")))
        if last_response is None:
            continue
        response = last_response.event.event.message  # type: ignore[attr-defined]
        calls = [
            part
            for part in response.parts
            if getattr(part, "part_kind", None) == "tool-call"
            and str(part.tool_call_id) not in answered
        ]
        if calls:
            found.append((last_response, calls))
    found.sort(key=lambda item: item[0].sequence)
    return found


def _interruptions(
    open_calls: Sequence[tuple[PersistedEvent, list[Any]]], at_sequence: int
) -> tuple[list[PersistedEvent], list[str]]:
    """The events closing each open call (in the parent's ids), and a line naming each."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    from akgentic.core.messages.orchestrator import EventMessage
    from akgentic.llm.events import LlmMessageEvent, ToolReturnEvent

    events: list[PersistedEvent] = []
    names: list[str] = []
    sequence = at_sequence
    for stored, calls in open_calls:
        origin = stored.event
        response = origin.event.message  # type: ignore[attr-defined]
        content = INTERRUPTED_BY_FORK.format(sequence=at_sequence)
        request = ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name=call.tool_name,
                    content=content,
                    tool_call_id=call.tool_call_id,
                    outcome="failed",
                )
                for call in calls
            ],
            run_id=response.run_id,
        )
        messages: list[Any] = [LlmMessageEvent(request)]
        messages += [
            ToolReturnEvent(
                run_id=str(response.run_id),
                tool_name=str(call.tool_name),
                tool_call_id=str(call.tool_call_id),
                success=False,
            )
            for call in calls
        ]
        for event in messages:
            message = EventMessage(event=event).init(origin.sender, origin.team_id)
            sequence += 1
            events.append(PersistedEvent(team_id=stored.team_id, sequence=sequence, event=message))
        sender = origin.sender.name if origin.sender is not None else "?"
        names += [f"{sender}: {call.tool_name} ({call.tool_call_id})" for call in calls]
    return events, names


def _copy_log(
    store: EventStore,
    parent_id: UUID,
    child_id: UUID,
    rows: Sequence[tuple[int, str]],
    rewrite: Rewrite,
    steps: Steps,
    page: int,
) -> None:
    """Append the parent's rows, rewritten, to the fork's log: one write per page."""
    copier = getattr(store, "copy_events", None)
    for start in range(0, len(rows), page):
        window = rows[start : start + page]
        first, last = window[0][0], window[-1][0]
        if callable(copier):
            copier(parent_id, child_id, first=first, last=last, rewrite=rewrite.payload)
        else:
            _save_all(store, [decode_event(rewrite.text(t), child_id, n) for n, t in window])
        steps(f"copied {last}")


def _save_all(store: EventStore, events: list[PersistedEvent]) -> None:
    """One atomic append when the store has batches, else one event at a time."""
    batch = getattr(store, "save_events", None)
    if callable(batch):
        batch(events)
        return
    for event in events:
        store.save_event(event)


def _check_parent(store: EventStore, parent_id: UUID, at_sequence: int) -> Process:
    parent = store.load_team(parent_id)
    if parent is None:
        if parent_id in store.stored_team_ids():
            raise TeamStateError(
                parent_id,
                "half-deleted",
                f"team {parent_id} is half-deleted (its events remain, its record is gone): "
                "nothing to fork; `akgentic store repair` removes such leftovers",
            )
        raise TeamNotFoundError(parent_id)
    if parent.status == TeamStatus.DELETED:
        raise TeamStateError(parent_id, parent.status, f"team {parent_id} is deleted")
    if isinstance(at_sequence, bool) or not isinstance(at_sequence, int):
        raise ForkPointError(
            f"the fork point must be an event sequence (an integer), not {at_sequence!r}"
        )
    last = store.get_max_sequence(parent_id)
    if last == 0:
        raise EventLogUnreadableError(f"team {parent_id} has an empty log: nothing to fork")
    if not 1 <= at_sequence <= last:
        raise ForkPointError(
            f"sequence {at_sequence} is out of range: team {parent_id} has events 1 to {last}"
        )
    return parent


def _steps_of(registry: PluginRegistry | None, request: ForkRequest) -> list[ForkStep]:
    if registry is None:
        from akgentic.plugins import current_registry

        registry = current_registry()
    return registry.fork_steps(request, refusal=(ForkRefusedError,), failed=ForkRefusedError)


def _states(
    store: EventStore, parent: Process, at_time: datetime, rewrite: Rewrite, child_id: UUID
) -> tuple[list[AgentStateSnapshot], list[str]]:
    """The parent's snapshots that hold the state at the fork point, rewritten; notes."""
    kept: list[AgentStateSnapshot] = []
    notes: list[str] = []
    for snapshot in store.load_agent_states(parent.team_id):
        if snapshot.updated_at > at_time:
            notes.append(
                f"the state of {snapshot.name or snapshot.agent_id} changed after the fork "
                "point; the fork rebuilds it from the log"
            )
            continue
        text = rewrite.text(encode_state(snapshot))
        kept.append(decode_state(text, child_id, rewrite.pairs.get(snapshot.agent_id, "")))
    return kept, notes


def fork_team(
    store: EventStore,
    parent_id: UUID,
    at_sequence: int,
    *,
    name: str | None = None,
    registry: PluginRegistry | None = None,
    rewind: bool = False,
    child_id: UUID | None = None,
    steps: Steps = _no_step,
    page: int = PAGE,
) -> ForkResult:
    """Make a new team of ``parent_id``'s events ``1..at_sequence`` (see the module docstring).

    The fork is recorded stopped, whatever the parent's status (a passivated
    parent is read from its log, not woken): resume it to run it. ``name`` is
    its own name (default: the parent's). ``steps`` is called with the name of each step
    before it is taken (tests kill the process there); ``page`` is how many
    events one read or write of the store moves. Raises
    ``TeamNotFoundError`` (unknown or half-deleted parent), ``TeamStateError``
    (a deleted parent), ``ForkPointError`` (``at_sequence`` out of range),
    ``EventLogUnreadableError`` (a gap or an undecodable event up to the fork
    point) and ``ForkRefusedError`` (a card whose state cannot be forked, or a
    missing or corrupt workspace journal); in every case nothing is created.
    """
    parent = _check_parent(store, parent_id, at_sequence)
    child = child_id or uuid.uuid4()
    steps("read")
    rows = _read_prefix(store, parent_id, at_sequence, page)
    at_time = decode_event(rows[-1][1], parent_id, at_sequence).timestamp
    ids = _id_map(parent_id, child, rows)
    open_calls = _open_calls(parent_id, rows)
    closing, interrupted = _interruptions(open_calls, at_sequence)
    request = ForkRequest(parent, child, at_sequence, at_time, rows, ids)
    plugin_steps = _steps_of(registry, request)
    rewrite = Rewrite(ids)
    for step in plugin_steps:
        rewrite = rewrite.with_pairs(step.rewrites)
    states, notes = _states(store, parent, at_time, rewrite, child)
    record = decode_process(rewrite.text(encode_process(parent)), str(child))
    now = utc_now()
    record = record.model_copy(
        update={
            "team_id": child,
            "status": TeamStatus.STOPPED,
            "reason": None,  # a broken parent's failed activation is not the fork's
            "owner": None,
            "epoch": 0,
            "created_at": now,
            "updated_at": now,
            "lineage": Lineage(
                parent_id=parent_id,
                parent_sequence=at_sequence,
                name=name or parent.name,
                rewind=rewind,
            ),
        }
    )
    prepared: list[ForkStep] = []
    try:
        for step in plugin_steps:
            steps(f"prepare {step.card}")
            prepared.append(step)  # discarded too if it fails half-way
            step.prepare()
        _copy_log(store, parent_id, child, rows, rewrite, steps, page)
        if closing:
            steps("interruptions")
            _save_all(
                store,
                [
                    decode_event(rewrite.text(encode_event(event)), child, event.sequence)
                    for event in closing
                ],
            )
        for snapshot in states:
            steps(f"state {snapshot.agent_id}")
            store.save_agent_state(snapshot)
        for step in prepared:
            steps(f"publish {step.card}")
            step.publish()
        steps("record")
        store.save_team(record)
    except BaseException:
        _undo(store, child, prepared)
        raise
    steps("done")
    return ForkResult(
        team_id=child,
        parent_id=parent_id,
        at_sequence=at_sequence,
        events=at_sequence + len(closing),
        interrupted=interrupted,
        notes=notes,
    )


def _undo(store: EventStore, child: UUID, prepared: Sequence[ForkStep]) -> None:
    """Remove what a failed fork made (the copy has no record yet: it is nobody's team)."""
    for step in reversed(prepared):
        try:
            step.discard()
        except Exception as exc:
            logger.warning(
                "undoing the fork %s: %s could not discard its copy: %s", child, step.card, exc
            )
    try:
        store.delete_team(child)
    except Exception as exc:
        logger.warning("undoing the fork %s: its partial log remains (%s)", child, exc)


def rewind_team(
    store: EventStore,
    team_id: UUID,
    to_sequence: int,
    *,
    owner: TeamOwner,
    registry: PluginRegistry | None = None,
    steps: Steps = _no_step,
) -> ForkResult:
    """A fork at ``to_sequence`` that takes over ``team_id``'s name; ``team_id`` is abandoned.

    The original must not be running (``TeamOwnedError`` / ``TeamStateError``);
    a passivated one may be rewound, and is recorded stopped so that no message
    wakes the abandoned branch. Its record is marked ``abandoned_for`` the fork,
    by ``owner``'s claim, only once the fork exists; nothing of it is deleted.
    """
    current = store.load_team(team_id)
    if current is not None and store.claim_held(team_id):
        owner_text = current.owner.describe() if current.owner is not None else None
        raise TeamOwnedError(
            team_id,
            owner_text,
            f"team {team_id} is running in {owner_text or 'another process'}; "
            "stop it before rewinding it",
        )
    result = fork_team(store, team_id, to_sequence, registry=registry, rewind=True, steps=steps)
    steps("abandon")
    claimed = store.claim_team(team_id, owner)
    try:
        lineage = claimed.lineage.model_copy(update={"abandoned_for": result.team_id})
        abandoned = claimed.model_copy(update={"lineage": lineage, "updated_at": utc_now()})
        if abandoned.status == TeamStatus.PASSIVATED:
            # A passivated team wakes on any message to its id: the branch given up
            # for the rewind must not, so it is stopped (an explicit resume still runs it).
            abandoned = abandoned.with_status(TeamStatus.STOPPED)
        store.save_team(abandoned, epoch=claimed.epoch)
    finally:
        store.release_team(team_id)
    return result


def lineage_of(teams: Iterable[Process], team_id: UUID) -> dict[str, Any]:
    """The family of ``team_id`` among ``teams``: its ancestors and every descendant.

    ``{"ancestors": [{"team_id", "name", "forked_at", "status"}...] (root first),
    "forks": [{"team_id", "name", "status", "at_sequence", "rewind", "abandoned_for",
    "forks": [...]}]}``; ``status`` is ``None`` for an ancestor whose record is gone.
    """
    by_id = {p.team_id: p for p in teams}
    children: dict[UUID, list[Process]] = {}
    for process in by_id.values():
        if process.lineage.parent_id is not None:
            children.setdefault(process.lineage.parent_id, []).append(process)
    ancestors: list[dict[str, Any]] = []
    seen = {team_id}
    here = by_id.get(team_id)
    while here is not None and here.lineage.parent_id is not None:
        parent_id = here.lineage.parent_id
        if parent_id in seen:
            break
        seen.add(parent_id)
        parent = by_id.get(parent_id)
        ancestors.insert(
            0,
            {
                "team_id": str(parent_id),
                "name": parent.name if parent is not None else None,
                "forked_at": here.lineage.parent_sequence,
                "status": str(parent.status) if parent is not None else None,
            },
        )
        here = parent

    def tree(node: UUID, depth: int) -> list[dict[str, Any]]:
        if depth > 64:
            return []
        found = sorted(children.get(node, []), key=lambda p: p.created_at)
        return [
            {
                "team_id": str(p.team_id),
                "name": p.name,
                "status": str(p.status),
                "at_sequence": p.lineage.parent_sequence,
                "rewind": p.lineage.rewind,
                "abandoned_for": (
                    str(p.lineage.abandoned_for) if p.lineage.abandoned_for else None
                ),
                "forks": tree(p.team_id, depth + 1),
            }
            for p in found
        ]

    return {"ancestors": ancestors, "forks": tree(team_id, 0)}
