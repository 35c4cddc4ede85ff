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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from akgentic.team.errors import EventLogUnreadableError, TeamRecordUnreadableError
from akgentic.team.models import TeamStatus
from akgentic.team.store import EventStore

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
    report = TeamReport(team_id)
    record_unreadable = False
    record = None
    try:
        record = store.load_team(team_id)
    except TeamRecordUnreadableError as exc:
        record_unreadable = True
        report.problems.append(str(exc))
    if record is not None:
        report.name, report.status = record.team_card.name, str(record.status)
    try:
        sequences = [event.sequence for event in store.load_events(team_id)]
    except EventLogUnreadableError as exc:
        report.problems.append(str(exc))
    else:
        report.events = len(sequences)
        if sequences != list(range(1, len(sequences) + 1)):
            missing = sorted(set(range(1, max(sequences) + 1)) - set(sequences))
            report.problems.append(f"the event log has gaps (missing sequence(s) {missing[:10]})")
    try:
        report.states = len(store.load_agent_states(team_id))
    except EventLogUnreadableError as exc:
        report.problems.append(str(exc))
    if record is None and not record_unreadable:
        report.orphan = True
        report.problems.append(
            f"no team record, yet {report.events} event(s) and {report.states} state(s): "
            "an orphan left by a failed creation; `akgentic store repair` removes it"
        )
    if record is not None and record.status == TeamStatus.RUNNING:
        if store.claim_held(team_id):
            owner = record.owner.describe() if record.owner else "a live process"
            report.notes.append(f"running in {owner}")
        else:
            report.notes.append(
                "recorded as running but no live process owns it (it crashed): resume it, "
                "or `akgentic team stop` marks it stopped"
            )
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
        if store.claim_held(team_id) or store.load_team(team_id) is not None:
            continue
        store.delete_team(team_id)
        removed.append(team_id)
    return removed
