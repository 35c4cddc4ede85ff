"""Checking and repairing an event store: what ``akgentic store check`` / ``repair`` run.

:func:`check_store` combines the store's own consistency check
(``check_integrity``: SQLite's ``PRAGMA integrity_check``, the YAML store's file
scan, PostgreSQL's constraint scan...) with a read of every team the store
holds anything of: its record decodes, its events decode and run 1, 2, 3...
without a gap, its agent states decode. A team with events or states but no
record is an *orphan* (left behind by a team creation that failed before
creation became all-or-nothing); :func:`repair_store` deletes orphans, and
nothing else, since every other problem needs a person (a backup, a fix by
hand). See ``docs/event-stores.md``.

The check reads what a store holds without importing the classes its records
name (:class:`~akgentic.team.store.RawRecordStore`, which the built-in stores
implement): the team's agent classes need not import where it runs. A record
naming a class whose module is not importable there is reported in one line,
as a note, never as an integrity fault. A store without raw reads is checked
through its decoding reads, and a class that does not import is a note there too.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from akgentic.core.utils.serializer import MODEL_KEY, TYPE_KEY, UnresolvableClassError
from akgentic.team.errors import EventLogUnreadableError, TeamRecordUnreadableError
from akgentic.team.models import TeamOwner, TeamStatus
from akgentic.team.store import EventStore, RawRecordStore, RawTeam
from akgentic.team.stores.codec import loads

__all__ = ["StoreReport", "TeamReport", "check_store", "repair_store"]


@dataclass
class TeamReport:
    """What the check found for one team."""

    team_id: UUID
    name: str | None = None
    status: str | None = None
    events: int = 0
    states: int = 0
    orphan: bool = False
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No problem found (notes are not problems)."""
        return not self.problems


@dataclass
class StoreReport:
    """What the check found: store-wide problems and one report per team."""

    problems: list[str] = field(default_factory=list)
    teams: list[TeamReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Neither the store nor any team has a problem."""
        return not self.problems and all(team.ok for team in self.teams)

    @property
    def orphans(self) -> list[UUID]:
        """Teams with events or states but no record."""
        return [team.team_id for team in self.teams if team.orphan]


def _check_team(store: EventStore, team_id: UUID) -> TeamReport:
    if isinstance(store, RawRecordStore):
        try:
            raw = store.load_raw_team(team_id)
        except (TeamRecordUnreadableError, EventLogUnreadableError):
            # A file that does not even parse: the decoding reads tell which
            # part (record, log, a state) is unreadable, one problem each.
            return _check_decoded(store, team_id)
        return _check_raw(store, team_id, raw)
    return _check_decoded(store, team_id)


def _gaps(report: TeamReport, sequences: list[int]) -> None:
    report.events = len(sequences)
    if sequences != list(range(1, len(sequences) + 1)):
        missing = sorted(set(range(1, max(sequences) + 1)) - set(sequences))
        report.problems.append(f"the event log has gaps (missing sequence(s) {missing[:10]})")


def _orphan(report: TeamReport) -> None:
    report.orphan = True
    report.problems.append(
        f"no team record, yet {report.events} event(s) and {report.states} state(s): "
        "an orphan left by a failed creation; `akgentic store repair` removes it"
    )


def _running(report: TeamReport, store: EventStore, owner: TeamOwner | None) -> None:
    if store.claim_held(report.team_id):
        report.notes.append(f"running in {owner.describe() if owner else 'a live process'}")
    else:
        report.notes.append(
            "recorded as running but no live process owns it (it crashed): resume it, "
            "or `akgentic team stop` marks it stopped"
        )


def _parse(data: str | dict[str, Any], what: str, problems: list[str]) -> dict[str, Any] | None:
    try:
        parsed = loads(data) if isinstance(data, str) else data
    except ValueError as exc:
        problems.append(f"{what} is not valid JSON: {exc}")
        return None
    if not isinstance(parsed, dict):
        problems.append(f"{what} is not a JSON object")
        return None
    return parsed


def _class_paths(data: Any, found: set[str]) -> None:
    """Collect the class paths ``data`` names (model and type markers), recursively."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key in (MODEL_KEY, TYPE_KEY) and isinstance(value, str):
                found.add(value)
            else:
                _class_paths(value, found)
    elif isinstance(data, list):
        for item in data:
            _class_paths(item, found)


def _not_importable(paths: set[str]) -> list[str]:
    """The paths whose top-level package cannot be found here (found, not imported)."""
    missing = []
    for path in sorted(paths):
        top = path.partition(".")[0]
        try:
            spec = importlib.util.find_spec(top) if top else None
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            missing.append(path)
    return missing


def _check_raw(store: EventStore, team_id: UUID, raw: RawTeam) -> TeamReport:
    report = TeamReport(team_id)
    problems = report.problems
    paths: set[str] = set()
    record = None
    if raw.record is not None:
        record = _parse(raw.record, f"the record of team {team_id}", problems)
        card = record.get("team_card") if record is not None else None
        if record is not None and not isinstance(card, dict):
            problems.append(f"the record of team {team_id} has no team card")
        elif record is not None and isinstance(card, dict):
            report.name = str(card.get("name") or "") or None
            report.status = str(record.get("status"))
            if report.status not in {status.value for status in TeamStatus}:
                problems.append(f"the record of team {team_id} has an unknown status")
            _class_paths(record, paths)
    sequences = []
    for sequence, data in raw.events:
        event = _parse(data, f"event {sequence} of team {team_id}", problems)
        if event is not None and event.get("sequence") != sequence:
            problems.append(f"event {sequence} of team {team_id} holds another sequence")
        sequences.append(sequence)
        _class_paths(event, paths)
    _gaps(report, sequences)
    for agent_id, data in raw.states:
        _class_paths(_parse(data, f"state of agent {agent_id} in team {team_id}", problems), paths)
    report.states = len(raw.states)
    if raw.record is None:
        _orphan(report)
    missing = _not_importable(paths)
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        report.notes.append(
            f"names classes that do not import here ({shown}): not an integrity fault; "
            "run where they import to load the team"
        )
    if record is not None and report.status == TeamStatus.RUNNING.value:
        try:
            owner = TeamOwner.model_validate(record["owner"]) if record.get("owner") else None
        except ValueError:
            owner = None
        _running(report, store, owner)
    return report


def _unimportable(exc: BaseException) -> bool:
    """Whether a decode failed because a class the record names does not import."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, UnresolvableClassError | ImportError):
            return True
        seen = seen.__cause__
    return "cannot import " in str(exc) or "cannot resolve '" in str(exc)


def _decode_failure(report: TeamReport, exc: Exception) -> None:
    if _unimportable(exc):
        first = str(exc).splitlines()[0]
        report.notes.append(f"does not import here (not an integrity fault): {first}")
    else:
        report.problems.append(str(exc))


def _check_decoded(store: EventStore, team_id: UUID) -> TeamReport:
    report = TeamReport(team_id)
    record_unreadable = False
    record = None
    try:
        record = store.load_team(team_id)
    except TeamRecordUnreadableError as exc:
        record_unreadable = True
        _decode_failure(report, exc)
    if record is not None:
        report.name, report.status = record.team_card.name, str(record.status)
    try:
        _gaps(report, [event.sequence for event in store.load_events(team_id)])
    except EventLogUnreadableError as exc:
        _decode_failure(report, exc)
    try:
        report.states = len(store.load_agent_states(team_id))
    except EventLogUnreadableError as exc:
        _decode_failure(report, exc)
    if record is None and not record_unreadable:
        _orphan(report)
    if record is not None and record.status == TeamStatus.RUNNING:
        _running(report, store, record.owner)
    return report


def check_store(store: EventStore) -> StoreReport:
    """Run the store's own check, then read every team it holds anything of."""
    report = StoreReport(problems=list(store.check_integrity()))
    for team_id in sorted(store.stored_team_ids(), key=str):
        report.teams.append(_check_team(store, team_id))
    return report


def repair_store(store: EventStore) -> list[UUID]:
    """Delete every orphan (events or states without a record); returns their ids.

    A team whose id is claimed by a live process is left alone, whatever it
    looks like, so a creation in progress elsewhere is never touched.
    """
    removed: list[UUID] = []
    for team_id in check_store(store).orphans:
        if store.claim_held(team_id) or _has_record(store, team_id):
            continue
        store.delete_team(team_id)
        removed.append(team_id)
    return removed


def _has_record(store: EventStore, team_id: UUID) -> bool:
    if isinstance(store, RawRecordStore):
        return store.load_raw_team(team_id).record is not None
    try:
        return store.load_team(team_id) is not None
    except TeamRecordUnreadableError:
        return True  # a record is there, whatever it holds
